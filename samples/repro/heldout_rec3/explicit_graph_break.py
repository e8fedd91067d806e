"""A torch._dynamo.graph_break() left in forward from a debugging session, compiled with fullgraph=True."""

import torch
import torch._dynamo

from _h import run


def block(x: torch.Tensor) -> torch.Tensor:
    h = torch.relu(x)
    torch._dynamo.graph_break()  # expect: explicit-break
    return h * 2


def main(fullgraph):
    run(block, torch.randn(2, 3), fullgraph=fullgraph)
