"""User code: packs K and V with kvpack.workspace in a compiled step (the failure is in the library)."""

import torch
from kvpack import workspace

from _h import run


def step(k: torch.Tensor, v: torch.Tensor) -> torch.Tensor:
    return workspace.pack(k, v).sum(-1)  # expect: call-workspace


def main(fullgraph):
    run(step, torch.randn(2, 4), torch.randn(2, 4), fullgraph=fullgraph)
