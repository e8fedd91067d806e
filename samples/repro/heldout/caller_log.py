"""A debug helper that logs which function called it (inspect.stack), called from forward."""

import inspect
import logging

import torch
from _run import compile_run

log = logging.getLogger("model.debug")


def trace_call(x):
    caller = inspect.stack()[1].function
    log.debug("%s got %s", caller, tuple(x.shape))


class Block(torch.nn.Module):
    def __init__(self, d=16):
        super().__init__()
        self.lin = torch.nn.Linear(d, d)

    def forward(self, x):
        trace_call(x)
        return self.lin(x)


if __name__ == "__main__":
    torch.manual_seed(0)
    compile_run(Block(), torch.randn(4, 16))
