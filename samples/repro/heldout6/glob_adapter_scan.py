"""Adapters discovered in forward with glob.glob over the model directory (none found: the base path runs)."""

import glob
import os

import torch
from _run import compile_run

HERE = os.path.dirname(os.path.abspath(__file__))


class Adapted(torch.nn.Module):
    def __init__(self, d=8):
        super().__init__()
        self.fc = torch.nn.Linear(d, d)

    def forward(self, x):
        adapters = sorted(glob.glob(os.path.join(HERE, "adapters", "*.safetensors")))
        h = self.fc(x)
        return h * (1.0 + 0.1 * len(adapters))


def main():
    torch.manual_seed(0)
    compile_run(Adapted(), torch.randn(3, 8))


if __name__ == "__main__":
    main()
