"""An MLP of two mxkern.MXLinear layers (weights quantized at construction; the kernel is reached from their forward)."""

import torch
from _run import compile_run

import mxkern


class MXMLP(torch.nn.Module):
    def __init__(self, d=64, hidden=128):
        super().__init__()
        self.up = mxkern.MXLinear(d, hidden)
        self.down = mxkern.MXLinear(hidden, d)

    def forward(self, x):
        return x + self.down(torch.nn.functional.gelu(self.up(x)))


def main():
    torch.manual_seed(0)
    compile_run(MXMLP(), torch.randn(4, 64))


if __name__ == "__main__":
    main()
