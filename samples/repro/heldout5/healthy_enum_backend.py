"""Attention backend chosen from an enum.Enum member held by the module (compiles as is)."""

import enum

import torch
from _run import compile_run


class AttnBackend(enum.Enum):
    SDPA = "sdpa"
    MATH = "math"


class Attn(torch.nn.Module):
    def __init__(self, d=16, backend=AttnBackend("math")):
        super().__init__()
        self.qkv = torch.nn.Linear(d, 3 * d)
        self.backend = backend

    def forward(self, x):
        q, k, v = self.qkv(x).unsqueeze(0).chunk(3, dim=-1)
        if self.backend is AttnBackend.SDPA:
            out = torch.nn.functional.scaled_dot_product_attention(q, k, v, is_causal=True)
        else:
            s = (q @ k.transpose(-1, -2)) / q.shape[-1] ** 0.5
            s = s.masked_fill(torch.ones_like(s, dtype=torch.bool).triu(1), float("-inf"))
            out = torch.softmax(s, dim=-1) @ v
        return out.squeeze(0)


def main():
    torch.manual_seed(0)
    compile_run(Attn(), torch.randn(5, 16))


if __name__ == "__main__":
    main()
