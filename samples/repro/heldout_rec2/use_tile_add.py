"""User code: a residual through tilekern.ops.scaled_add (the failure is in the library's loader)."""

import torch
from tilekern import ops

from _h import run


def residual(x: torch.Tensor, h: torch.Tensor) -> torch.Tensor:
    return ops.scaled_add(x, h, 0.5)  # expect: call-tile-add


def main(fullgraph):
    run(residual, torch.randn(2, 4), torch.randn(2, 4), fullgraph=fullgraph)
