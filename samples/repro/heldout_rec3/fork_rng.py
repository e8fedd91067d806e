"""Augmentation noise drawn under torch.random.fork_rng() so the caller's RNG stream is left untouched."""

import torch

from _h import run


def augment(x: torch.Tensor) -> torch.Tensor:
    with torch.random.fork_rng():  # expect: fork-rng
        torch.manual_seed(7)
        noise = torch.randn_like(x)
    return x + 0.01 * noise


def main(fullgraph):
    run(augment, torch.randn(2, 3), fullgraph=fullgraph)
