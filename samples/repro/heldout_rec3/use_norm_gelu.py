"""User code: a block through normkit.ops.gelu (the failure, if any, is in the library's config module)."""

import torch
from normkit import ops

from _h import run


def block(x: torch.Tensor) -> torch.Tensor:
    return ops.gelu(x) + 1  # expect: call-gelu


def main(fullgraph):
    run(block, torch.randn(2, 4), fullgraph=fullgraph)
