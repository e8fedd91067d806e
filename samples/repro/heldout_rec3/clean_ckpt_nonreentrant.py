"""Not a failure: non-reentrant activation checkpointing inside a fullgraph compile, under
TORCH_LOGS=graph_breaks,recompiles (nothing to report), then backward."""

import torch
import torch.utils.checkpoint

from _h import show

LIN = torch.nn.Linear(4, 4)


def block(x: torch.Tensor) -> torch.Tensor:
    return torch.nn.functional.gelu(LIN(x))


def model(x: torch.Tensor) -> torch.Tensor:
    return torch.utils.checkpoint.checkpoint(block, x, use_reentrant=False).sum()


def main(fullgraph):
    out = torch.compile(model, backend="eager", fullgraph=fullgraph)(torch.randn(3, 4, requires_grad=True))
    out.backward()
    print(f"compiled run done: {show(out)}", flush=True)
