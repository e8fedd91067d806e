"""Gives each forward call a request number from a module-level itertools.count(), kept on the module."""

import itertools

import torch
from _run import compile_run

_REQUEST_IDS = itertools.count(1)


class NumberedLayer(torch.nn.Module):
    def __init__(self, d=16):
        super().__init__()
        self.proj = torch.nn.Linear(d, d)
        self.last_request = 0

    def forward(self, x):
        self.last_request = next(_REQUEST_IDS)
        return self.proj(x).relu()


if __name__ == "__main__":
    torch.manual_seed(0)
    compile_run(NumberedLayer(), torch.randn(4, 16))
