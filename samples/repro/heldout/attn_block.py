"""A self-attention block calling a third-party attention package (its kernel cache key is a sha1)."""

import torch
from _run import compile_run

import tinyattn


class Block(torch.nn.Module):
    def __init__(self, d=32, heads=4):
        super().__init__()
        self.heads = heads
        self.qkv = torch.nn.Linear(d, 3 * d)
        self.out = torch.nn.Linear(d, d)

    def forward(self, x):
        b, n, d = x.shape
        q, k, v = self.qkv(x).view(b, n, 3, self.heads, d // self.heads).permute(2, 0, 3, 1, 4)
        o = tinyattn.attention(q, k, v, causal=True)
        return self.out(o.transpose(1, 2).reshape(b, n, d))


if __name__ == "__main__":
    torch.manual_seed(0)
    compile_run(Block(), torch.randn(2, 8, 32))
