"""Not a failure: a clean fullgraph compile with backend="aot_eager" under TORCH_LOGS=aot_graphs, which prints the
joint forward and backward graphs; then a backward pass."""

import torch

from _h import show


def mlp(x: torch.Tensor, w: torch.Tensor) -> torch.Tensor:
    return torch.nn.functional.silu(x @ w).sum()


def main(fullgraph):
    f = torch.compile(mlp, backend="aot_eager", fullgraph=fullgraph)
    w = torch.randn(3, 3, requires_grad=True)
    out = f(torch.randn(2, 3), w)
    out.backward()
    print(f"compiled run done: {show(out)} grad {show(w.grad)}", flush=True)
