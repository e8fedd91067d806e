"""An MLP whose two projections are quantix.QuantLinear submodules (the kernel is reached from their forward)."""

import torch
from _run import compile_run

import quantix


class QuantMLP(torch.nn.Module):
    def __init__(self, d=32, h=64):
        super().__init__()
        self.up = quantix.QuantLinear(torch.randn(h, d) / d ** 0.5)
        self.down = quantix.QuantLinear(torch.randn(d, h) / h ** 0.5)
        self.norm = torch.nn.LayerNorm(d)

    def forward(self, x):
        return x + self.down(torch.relu(self.up(self.norm(x))))


if __name__ == "__main__":
    torch.manual_seed(0)
    compile_run(QuantMLP(), torch.randn(4, 32))
