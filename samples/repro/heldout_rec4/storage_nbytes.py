"""Memory accounting in forward: the activation's storage size from untyped_storage().nbytes()."""

import torch

from _h import run

ACCOUNT = {"bytes": 0}


def block(x: torch.Tensor) -> torch.Tensor:
    h = torch.nn.functional.gelu(x)
    ACCOUNT["bytes"] += h.untyped_storage().nbytes()  # expect: storage-nbytes
    return h


def main(fullgraph):
    run(block, torch.randn(4, 8), fullgraph=fullgraph)
