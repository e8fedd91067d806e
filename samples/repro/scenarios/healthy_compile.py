"""Not a failure: an MLP block that compiles and runs cleanly (a negative for the corpus)."""

import torch

from ._harness import compile_and_run


class MLP(torch.nn.Module):
    def __init__(self, dim: int = 16):
        super().__init__()
        self.up = torch.nn.Linear(dim, 4 * dim)
        self.down = torch.nn.Linear(4 * dim, dim)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.down(torch.nn.functional.silu(self.up(x)))


def main(fullgraph: bool) -> None:
    compile_and_run(MLP(), torch.randn(4, 16), fullgraph=fullgraph)
