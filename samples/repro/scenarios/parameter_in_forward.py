"""A LoRA adapter that builds its scaling vector as an nn.Parameter inside forward()."""

import torch

from ._harness import compile_and_run


class LoRALinear(torch.nn.Module):
    def __init__(self, dim: int = 16, rank: int = 4):
        super().__init__()
        self.base = torch.nn.Linear(dim, dim)
        self.a = torch.nn.Parameter(torch.randn(dim, rank) * 0.01)
        self.b = torch.nn.Parameter(torch.zeros(rank, dim))

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        scale = torch.nn.Parameter(torch.ones(x.shape[-1]))  # expect: parameter
        return self.base(x) + (x @ self.a @ self.b) * scale


def main(fullgraph: bool) -> None:
    compile_and_run(LoRALinear(), torch.randn(4, 16), fullgraph=fullgraph)
