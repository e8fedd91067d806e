"""A gated MLP whose fused projection has an odd width: kernelhub.silu_and_mul rejects it (in eager too)."""

import torch
from _run import compile_run

import kernelhub


class OddMLP(torch.nn.Module):
    def __init__(self, d=32, hidden=63):
        super().__init__()
        self.gate_up = torch.nn.Linear(d, hidden)
        self.down = torch.nn.Linear(hidden // 2, d)

    def forward(self, x):
        return self.down(kernelhub.silu_and_mul(self.gate_up(x)))


if __name__ == "__main__":
    torch.manual_seed(0)
    compile_run(OddMLP(), torch.randn(4, 32))
