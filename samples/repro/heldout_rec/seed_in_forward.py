"""Dropout made reproducible by re-seeding the global generator inside forward()."""

import torch

from _h import run


def noisy(x: torch.Tensor) -> torch.Tensor:
    torch.manual_seed(1234)  # expect: manual-seed
    return torch.nn.functional.dropout(x, p=0.1, training=True)


def main(fullgraph):
    run(noisy, torch.randn(4, 4), fullgraph=fullgraph)
