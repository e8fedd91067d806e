"""A forward() that still calls torch._dynamo.graph_break() (left from debugging) under fullgraph=True."""

import torch

from ._harness import compile_and_run


def mlp(x: torch.Tensor, w1: torch.Tensor, w2: torch.Tensor):
    h = torch.relu(x @ w1)
    torch._dynamo.graph_break()  # expect: graph-break-call
    return h @ w2


def main(fullgraph: bool) -> None:
    compile_and_run(mlp, torch.randn(4, 16), torch.randn(16, 32), torch.randn(32, 8), fullgraph=fullgraph)
