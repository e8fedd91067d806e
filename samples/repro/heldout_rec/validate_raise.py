"""forward() validates its input and raises ValueError on a bad head count (fails in eager too)."""

import torch

from _h import run


def attn_scores(q: torch.Tensor, heads: int) -> torch.Tensor:
    if q.shape[-1] % heads:
        raise ValueError(f"hidden size {q.shape[-1]} is not divisible by {heads} heads")  # expect: raise-value
    return q.view(q.shape[0], heads, -1).softmax(-1)


def main(fullgraph):
    run(attn_scores, torch.randn(2, 10), 4, fullgraph=fullgraph)
