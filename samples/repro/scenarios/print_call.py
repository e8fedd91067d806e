"""A debug print left in an attention backend's forward()."""

import torch

from ._harness import compile_and_run


def attention_forward(q: torch.Tensor, k: torch.Tensor, v: torch.Tensor) -> torch.Tensor:
    print("attn q/k/v shapes:", q.shape, k.shape, v.shape)  # expect: print
    scores = q @ k.transpose(-2, -1) / q.shape[-1] ** 0.5
    return torch.softmax(scores, dim=-1) @ v


def main(fullgraph: bool) -> None:
    q, k, v = (torch.randn(2, 8, 16) for _ in range(3))
    compile_and_run(attention_forward, q, k, v, fullgraph=fullgraph)
