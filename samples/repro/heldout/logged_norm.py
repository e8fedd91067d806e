"""A layer norm that logs the input's statistics at debug level each call."""

import logging

import torch
from _run import compile_run

log = logging.getLogger("model.norm")


class LoggedNorm(torch.nn.Module):
    def __init__(self, d=16):
        super().__init__()
        self.norm = torch.nn.LayerNorm(d)

    def forward(self, x):
        log.warning("norm input %s mean %.3f", tuple(x.shape), x.mean())
        return self.norm(x) * 2.0 + 1.0


if __name__ == "__main__":
    torch.manual_seed(0)
    compile_run(LoggedNorm(), torch.randn(4, 16))
