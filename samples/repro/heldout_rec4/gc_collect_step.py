"""A training step that runs gc.collect() every call to keep host memory down."""

import gc

import torch

from _h import run

W = torch.randn(4, 4)


def train_step(x: torch.Tensor) -> torch.Tensor:
    loss = (x @ W).pow(2).mean()
    gc.collect()  # expect: gc-collect
    return loss


def main(fullgraph):
    run(train_step, torch.randn(3, 4), fullgraph=fullgraph)
