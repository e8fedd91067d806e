"""An MLP whose weights are w4kit.PackedWeight objects (an object wrapper) applied with their .matmul method."""

import torch
from _run import compile_run

import w4kit


class PackedMLP(torch.nn.Module):
    def __init__(self, d=64, hidden=96):
        super().__init__()
        self.up = w4kit.PackedWeight.from_float(torch.randn(hidden, d) * 0.1)
        self.down = w4kit.PackedWeight.from_float(torch.randn(d, hidden) * 0.1)

    def forward(self, x):
        return x + self.down.matmul(torch.nn.functional.gelu(self.up.matmul(x)))


def main():
    torch.manual_seed(0)
    compile_run(PackedMLP(), torch.randn(2, 5, 64))


if __name__ == "__main__":
    main()
