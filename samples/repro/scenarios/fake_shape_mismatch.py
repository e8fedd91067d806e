"""A projection whose weight was loaded transposed: a plain matmul with mismatched shapes.

This also fails without torch.compile.  Under dynamo it surfaces while running the op on fake tensors."""

import torch

from ._harness import compile_and_run


class OutProj(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.weight = torch.nn.Parameter(torch.randn(32, 16))

    def forward(self, attn_out: torch.Tensor) -> torch.Tensor:
        return torch.matmul(attn_out, self.weight)  # expect: shape-mismatch


def main(fullgraph: bool) -> None:
    compile_and_run(OutProj(), torch.randn(4, 16), fullgraph=fullgraph)
