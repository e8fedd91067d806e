"""A layer whose `scale` property caches on first read and logs the read to stderr (a side-effecting property)."""

import sys

import torch
from _run import compile_run


class LazyScale(torch.nn.Module):
    def __init__(self, d=16):
        super().__init__()
        self.lin = torch.nn.Linear(d, d)
        self._scale = None

    @property
    def scale(self):
        if self._scale is None:
            sys.stderr.write(f"LazyScale: computing scale for width {self.lin.in_features}\n")
            self._scale = self.lin.in_features ** -0.5
        return self._scale

    def forward(self, x):
        return self.lin(x) * self.scale


if __name__ == "__main__":
    torch.manual_seed(0)
    compile_run(LazyScale(), torch.randn(4, 16))
