"""A stack that draws a progress marker per layer only when stderr is a terminal (sys.stderr.isatty())."""

import sys

import torch
from _run import compile_run


class ProgressStack(torch.nn.Module):
    def __init__(self, d=16, n=3):
        super().__init__()
        self.layers = torch.nn.ModuleList(torch.nn.Linear(d, d) for _ in range(n))

    def forward(self, x):
        show = sys.stderr.isatty()
        for i, layer in enumerate(self.layers):
            x = torch.relu(layer(x))
            if show:
                sys.stderr.write(f"\rlayer {i + 1}/{len(self.layers)}")
        return x


if __name__ == "__main__":
    torch.manual_seed(0)
    compile_run(ProgressStack(), torch.randn(4, 16))
