"""A rotary embedding whose cos/sin cache was built on another device than the activations.

This also fails without torch.compile: the code mixes devices.  Under dynamo the error comes from
fake-tensor propagation while tracing."""

import torch

from ._harness import compile_and_run


class Rotary(torch.nn.Module):
    def __init__(self, dim: int = 8):
        super().__init__()
        self.cos_cache = torch.ones(32, dim, device="meta")

    def forward(self, positions: torch.Tensor, q: torch.Tensor) -> torch.Tensor:
        cos = self.cos_cache[positions]
        return q * cos  # expect: device-mismatch


def main(fullgraph: bool) -> None:
    compile_and_run(Rotary(), torch.tensor([0, 1, 2, 3]), torch.randn(4, 8), fullgraph=fullgraph)
