"""Attention heads are merged with .view after a transpose: the tensor is not contiguous (fails in eager too)."""

import torch

from _h import run


def merge_heads(x: torch.Tensor) -> torch.Tensor:
    b, h, t, d = x.shape
    return x.transpose(1, 2).view(b, t, h * d)  # expect: noncontig-view


def main(fullgraph):
    run(merge_heads, torch.randn(2, 3, 4, 5), fullgraph=fullgraph)
