"""User code: a block through normkit.ops.rms_norm (the failure, if any, is in the library's config module)."""

import torch
from normkit import ops

from _h import run


def block(x: torch.Tensor) -> torch.Tensor:
    return ops.rms_norm(x) + 1  # expect: call-rms_norm


def main(fullgraph):
    run(block, torch.randn(2, 4), fullgraph=fullgraph)
