"""Not a dynamo failure: the compiled part runs, then eager post-processing crashes with a matmul shape
error inside torch.nn (no torch.compile involved in that crash)."""

import torch

from _h import run


def encode(x: torch.Tensor) -> torch.Tensor:
    return torch.nn.functional.silu(x)


def main(fullgraph):
    h = run(encode, torch.randn(2, 6), fullgraph=fullgraph)
    head = torch.nn.Linear(8, 3)
    print(head(h))  # expect: eager-shape
