"""A training step that skips the update when the loss is not finite, checked with math.isfinite."""

import math

import torch

from _h import run

W = torch.randn(4, 2)


def train_step(x: torch.Tensor) -> torch.Tensor:
    loss = (x @ W).pow(2).mean()
    if not math.isfinite(loss):  # expect: math-isfinite
        return torch.zeros_like(loss)
    return loss


def main(fullgraph):
    run(train_step, torch.randn(3, 4), fullgraph=fullgraph)
