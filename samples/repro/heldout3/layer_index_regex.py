"""Depth-scaled residuals: each block parses its layer index out of its qualified name with re in forward."""

import re

import torch
from _run import compile_run


class Block(torch.nn.Module):
    def __init__(self, name, d=16):
        super().__init__()
        self.qualname = name
        self.lin = torch.nn.Linear(d, d)

    def forward(self, x):
        m = re.search(r"layers\.(\d+)$", self.qualname)
        depth = int(m.group(1)) + 1 if m else 1
        return x + self.lin(x) / depth


class Stack(torch.nn.Module):
    def __init__(self, n=3):
        super().__init__()
        self.layers = torch.nn.ModuleList(Block(f"model.layers.{i}") for i in range(n))

    def forward(self, x):
        for blk in self.layers:
            x = blk(x)
        return x


if __name__ == "__main__":
    torch.manual_seed(0)
    compile_run(Stack(), torch.randn(4, 16))
