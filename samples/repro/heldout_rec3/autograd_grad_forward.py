"""A physics-style loss needs d(energy)/d(position) inside forward, taken with torch.autograd.grad."""

import torch

from _h import run


def forces(pos: torch.Tensor) -> torch.Tensor:
    energy = (pos ** 2).sum()
    (grad,) = torch.autograd.grad(energy, pos, create_graph=True)  # expect: autograd-grad
    return -grad


def main(fullgraph):
    run(forces, torch.randn(4, 3, requires_grad=True), fullgraph=fullgraph)
