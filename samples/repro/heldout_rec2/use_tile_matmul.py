"""User code: a projection through tilekern.ops.tiled_matmul (the failure is in the library's loader)."""

import torch
from tilekern import ops

from _h import run


def proj(x: torch.Tensor, w: torch.Tensor) -> torch.Tensor:
    return ops.tiled_matmul(x, w).relu()  # expect: call-tile-matmul


def main(fullgraph):
    run(proj, torch.randn(8, 4), torch.randn(4, 4), fullgraph=fullgraph)
