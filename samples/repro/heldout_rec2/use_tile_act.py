"""User code: an activation through tilekern.ops.fused_act (the failure is in the library's loader)."""

import torch
from tilekern import ops

from _h import run


def act(x: torch.Tensor) -> torch.Tensor:
    return ops.fused_act(x) * 2  # expect: call-tile-act


def main(fullgraph):
    run(act, torch.randn(2, 4), fullgraph=fullgraph)
