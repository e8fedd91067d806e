"""A low-level trace line written with os.write(2, ...) (unbuffered, as signal-safe tracers do) in forward."""

import os

import torch
from _run import compile_run


class Traced(torch.nn.Module):
    def __init__(self, d=8):
        super().__init__()
        self.fc = torch.nn.Linear(d, d)

    def forward(self, x):
        os.write(2, b"trace: forward\n")
        return self.fc(x).tanh()


def main():
    torch.manual_seed(0)
    compile_run(Traced(), torch.randn(3, 8))


if __name__ == "__main__":
    main()
