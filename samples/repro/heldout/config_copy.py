"""A block that deep-copies its config each call before adjusting it for the input."""

import copy

import torch
from _run import compile_run


class Block(torch.nn.Module):
    def __init__(self, d=16):
        super().__init__()
        self.lin = torch.nn.Linear(d, d)
        self.config = {"dropout": 0.0, "scale": {"value": 0.5}}

    def forward(self, x):
        cfg = copy.deepcopy(self.config)
        cfg["scale"]["value"] *= 2
        return self.lin(x) * cfg["scale"]["value"]


if __name__ == "__main__":
    torch.manual_seed(0)
    compile_run(Block(), torch.randn(4, 16))
