"""An in-place update of a leaf tensor that requires grad (fails in eager too)."""

import torch

from _h import run


def update(w: torch.Tensor, g: torch.Tensor) -> torch.Tensor:
    w.sub_(0.1 * g)  # expect: inplace-leaf
    return w.sum()


def main(fullgraph):
    run(update, torch.randn(5, requires_grad=True), torch.randn(5), fullgraph=fullgraph)
