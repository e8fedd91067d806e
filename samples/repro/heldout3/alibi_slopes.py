"""ALiBi attention biases whose per-head slopes come from a functools.lru_cache helper returning a Python list."""

import functools
import math

import torch
from _run import compile_run


@functools.lru_cache(maxsize=8)
def alibi_slopes(n_heads: int) -> list[float]:
    start = 2 ** (-(2 ** -(math.log2(n_heads) - 3)))
    return [start ** (i + 1) for i in range(n_heads)]


class AlibiBias(torch.nn.Module):
    def __init__(self, heads=4):
        super().__init__()
        self.heads = heads

    def forward(self, scores):
        t = scores.shape[-1]
        slopes = torch.tensor(alibi_slopes(self.heads)).view(-1, 1, 1)
        dist = torch.arange(t).view(1, 1, t) - torch.arange(t).view(1, t, 1)
        return scores + slopes * dist.to(scores.dtype)


if __name__ == "__main__":
    torch.manual_seed(0)
    compile_run(AlibiBias(), torch.randn(4, 6, 6))
