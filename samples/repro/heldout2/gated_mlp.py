"""A gated MLP (LLaMA style) whose activation is kernelhub.silu_and_mul on the fused up/gate projection."""

import torch
from _run import compile_run

import kernelhub


class GatedMLP(torch.nn.Module):
    def __init__(self, d=32, hidden=64):
        super().__init__()
        self.gate_up = torch.nn.Linear(d, 2 * hidden, bias=False)
        self.down = torch.nn.Linear(hidden, d, bias=False)

    def forward(self, x):
        return self.down(kernelhub.silu_and_mul(self.gate_up(x)))


if __name__ == "__main__":
    torch.manual_seed(0)
    compile_run(GatedMLP(), torch.randn(4, 32))
