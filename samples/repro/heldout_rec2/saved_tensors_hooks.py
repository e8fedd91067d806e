"""Activation offload: forward wraps the MLP in torch.autograd.graph.saved_tensors_hooks that pack saved
activations to a Python list."""

import torch

from _h import run

OFFLOADED = []


def pack(t):
    OFFLOADED.append(t.shape)
    return t


def mlp(x: torch.Tensor, w: torch.Tensor) -> torch.Tensor:
    with torch.autograd.graph.saved_tensors_hooks(pack, lambda t: t):  # expect: saved-hooks
        return torch.relu(x @ w).sum(-1)


def main(fullgraph):
    run(mlp, torch.randn(3, 4, requires_grad=True), torch.randn(4, 4, requires_grad=True), fullgraph=fullgraph)
