"""capture_scalar_outputs turned on, then a Python branch on the captured scalar (a data-dependent guard)."""

import torch
import torch._dynamo

from _h import run


def route(x: torch.Tensor) -> torch.Tensor:
    n = int((x > 0).sum().item())
    if n > 4:  # expect: unbacked-guard
        return x.relu()
    return x.neg()


def main(fullgraph):
    torch._dynamo.config.capture_scalar_outputs = True
    run(route, torch.randn(16), fullgraph=fullgraph)
