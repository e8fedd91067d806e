"""Dropout-like noise drawn from a torch.Generator that forward creates and seeds on every call."""

import torch

from _h import run


def noisy(x: torch.Tensor) -> torch.Tensor:
    g = torch.Generator().manual_seed(1234)  # expect: generator-new
    return x + 0.1 * torch.randn(x.shape, generator=g)


def main(fullgraph):
    run(noisy, torch.randn(2, 3), fullgraph=fullgraph)
