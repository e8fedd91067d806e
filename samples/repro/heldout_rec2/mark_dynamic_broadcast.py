"""The batch dimension of the hidden states is marked dynamic, but a fixed-size bias of 6 rows is added to
it, which specialises that dimension to 6."""

import torch
import torch._dynamo

from _h import run

BIAS = torch.randn(6, 4)


def add_bias(h: torch.Tensor) -> torch.Tensor:
    return h + BIAS  # expect: broadcast-specialise


def main(fullgraph):
    h = torch.randn(6, 4)
    torch._dynamo.mark_dynamic(h, 0)
    run(add_bias, h, fullgraph=fullgraph)
