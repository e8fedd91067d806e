"""User code: attention queries through fastrope.ops.rope (the failure, if any, is in the library)."""

import torch
from fastrope import ops

from _h import run


def queries(x: torch.Tensor) -> torch.Tensor:
    return ops.rope(x) * 0.5  # expect: call-rope-flag


def main(fullgraph):
    run(queries, torch.randn(4, 3, 8), fullgraph=fullgraph)
