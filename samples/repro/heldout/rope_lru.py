"""Rotary tables built by an lru_cache'd helper keyed by (length, dim)."""

import functools

import torch
from _run import compile_run


@functools.lru_cache(maxsize=8)
def rope_table(n: int, d: int):
    inv = 1.0 / (10000 ** (torch.arange(0, d, 2, dtype=torch.float32) / d))
    ang = torch.arange(n, dtype=torch.float32)[:, None] * inv[None, :]
    return ang.cos(), ang.sin()


class Rope(torch.nn.Module):
    def forward(self, q):
        cos, sin = rope_table(q.shape[0], q.shape[1])
        q1, q2 = q[:, ::2], q[:, 1::2]
        return torch.cat([q1 * cos - q2 * sin, q1 * sin + q2 * cos], dim=-1)


if __name__ == "__main__":
    torch.manual_seed(0)
    compile_run(Rope(), torch.randn(8, 16))
