"""Fused QKV through w4kit.w4_gemm(..., out=buf): the output buffer is allocated in forward and split afterwards."""

import torch
from _run import compile_run

import w4kit


class QKV(torch.nn.Module):
    def __init__(self, d=32, heads=2):
        super().__init__()
        self.q, self.s, self.z = w4kit.quantize_w4(torch.randn(3 * d, d) * 0.2)
        self.heads = heads

    def forward(self, x):
        buf = torch.empty(x.shape[0], self.q.shape[0], dtype=x.dtype)
        w4kit.w4_gemm(x, self.q, self.s, self.z, out=buf)
        q, k, v = buf.chunk(3, dim=-1)
        att = torch.softmax(q @ k.t() / q.shape[-1] ** 0.5, dim=-1)
        return att @ v


def main():
    torch.manual_seed(0)
    compile_run(QKV(), torch.randn(6, 32))


if __name__ == "__main__":
    main()
