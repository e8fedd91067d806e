"""User code: attention queries through fastrope.ops.rope_versioned (the failure, if any, is in the library)."""

import torch
from fastrope import ops

from _h import run


def queries(x: torch.Tensor) -> torch.Tensor:
    return ops.rope_versioned(x) * 0.5  # expect: call-rope-versioned


def main(fullgraph):
    run(queries, torch.randn(4, 3, 8), fullgraph=fullgraph)
