"""Chunks are ordered by their norm with Python's sorted(key=...) before being concatenated."""

import torch

from _h import run


def order_chunks(x: torch.Tensor) -> torch.Tensor:
    chunks = list(x.unbind(0))
    chunks = sorted(chunks, key=lambda t: t.norm())  # expect: sorted-norm
    return torch.stack(chunks)


def main(fullgraph):
    run(order_chunks, torch.randn(4, 3), fullgraph=fullgraph)
