"""Attention output cast through a library function imported under another name, with a dtype argument."""

import torch
from _run import compile_run

from fakelib import scaled_cast as cast_out


class Attention(torch.nn.Module):
    def __init__(self, d=32):
        super().__init__()
        self.qkv = torch.nn.Linear(d, 3 * d)

    def forward(self, x):
        q, k, v = self.qkv(x).chunk(3, dim=-1)
        o = torch.softmax(q @ k.transpose(-2, -1) / q.shape[-1] ** 0.5, dim=-1) @ v
        return cast_out(o, 0.5, dtype=torch.float16)


if __name__ == "__main__":
    torch.manual_seed(0)
    compile_run(Attention(), torch.randn(6, 32))
