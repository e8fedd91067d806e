"""Not a failure: a clean fullgraph compile under TORCH_LOGS=guards,recompiles; a second batch size makes
dynamo recompile once (automatic dynamic), and the guard and recompile reasons are printed."""

import torch

from _h import show


def norm(x: torch.Tensor) -> torch.Tensor:
    return x / x.norm(dim=-1, keepdim=True)


def main(fullgraph):
    f = torch.compile(norm, backend="eager", fullgraph=fullgraph)
    for n in (2, 3, 4):
        print(f"batch {n}: {show(f(torch.randn(n, 4)))}", flush=True)
