"""User code: attention queries through fastrope.ops.rope_chunked (the failure, if any, is in the library)."""

import torch
from fastrope import ops

from _h import run


def queries(x: torch.Tensor) -> torch.Tensor:
    return ops.rope_chunked(x) * 0.5  # expect: call-rope-chunks


def main(fullgraph):
    run(queries, torch.randn(4, 3, 8), fullgraph=fullgraph)
