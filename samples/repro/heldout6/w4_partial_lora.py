"""A LoRA-style adapter on an int4 base weight; the kernel is bound with functools.partial(w4kit.w4_gemm, ...) in __init__."""

import functools

import torch
from _run import compile_run

import w4kit


class LoRAInt4(torch.nn.Module):
    def __init__(self, d=64, rank=4, alpha=8.0):
        super().__init__()
        q, s, z = w4kit.quantize_w4(torch.randn(d, d) * 0.1)
        self.base = functools.partial(w4kit.w4_gemm, qweight=q, scales=s, zeros=z, group_size=32)
        self.a = torch.nn.Parameter(torch.randn(rank, d) * 0.1)
        self.b = torch.nn.Parameter(torch.randn(d, rank) * 0.1)
        self.scaling = alpha / rank

    def forward(self, x):
        return self.base(x) + (x @ self.a.t() @ self.b.t()) * self.scaling


def main():
    torch.manual_seed(0)
    compile_run(LoRAInt4(), torch.randn(3, 64))


if __name__ == "__main__":
    main()
