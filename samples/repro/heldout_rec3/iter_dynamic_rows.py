"""Rows of a batch whose first dimension is marked dynamic are iterated with a Python for loop."""

import torch
import torch._dynamo

from _h import run


def per_row(x: torch.Tensor) -> torch.Tensor:
    outs = []
    for row in x:  # expect: iter-dynamic
        outs.append(row.softmax(-1))
    return torch.stack(outs)


def main(fullgraph):
    x = torch.randn(5, 3)
    torch._dynamo.mark_dynamic(x, 0)
    run(per_row, x, fullgraph=fullgraph)
