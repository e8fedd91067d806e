"""A decode step compiled once per distinct Python int (a step counter passed as a plain int)."""

import torch
import torch._dynamo

from ._harness import describe


def decode_step(x: torch.Tensor, step: int) -> torch.Tensor:
    return x * step + 1  # expect: recompile


def main(fullgraph: bool) -> None:
    # recompile_limit is the 2.6+ name; torch 2.1-2.5 call it cache_size_limit
    limit = "recompile_limit" if hasattr(torch._dynamo.config, "recompile_limit") else "cache_size_limit"
    setattr(torch._dynamo.config, limit, 4)
    compiled = torch.compile(decode_step, backend="eager", fullgraph=fullgraph, dynamic=False)
    x = torch.randn(4)
    for step in range(8):
        out = compiled(x, step)
    print(f"decode loop finished: {describe(out)}", flush=True)
