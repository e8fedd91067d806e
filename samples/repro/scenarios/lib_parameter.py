"""User code that uses the kernel library's FusedNorm module, which builds its weight lazily in forward().

The failure is inside the library (fakeinfer/sampling.py), not in this file."""

import torch

from fakeinfer.sampling import FusedNorm

from ._harness import compile_and_run


class Block(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.norm = FusedNorm()
        self.proj = torch.nn.Linear(16, 16)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.proj(self.norm(x))  # expect: lib-call-parameter


def main(fullgraph: bool) -> None:
    compile_and_run(Block(), torch.randn(4, 16), fullgraph=fullgraph)
