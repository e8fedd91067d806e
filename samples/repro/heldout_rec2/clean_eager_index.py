"""Not a dynamo failure: the compiled encoder runs, then eager post-processing indexes with float ids
(index_select wants integer indices)."""

import torch

from _h import run


def encode(x: torch.Tensor) -> torch.Tensor:
    return torch.tanh(x) * 2


def main(fullgraph):
    h = run(encode, torch.randn(4, 3), fullgraph=fullgraph)
    picked = torch.tensor([0.0, 2.0])
    print(torch.index_select(h, 0, picked))  # expect: eager-index
