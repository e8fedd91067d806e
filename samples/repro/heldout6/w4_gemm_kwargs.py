"""A projection whose int4 weight (quantized at construction) is applied with w4kit.w4_gemm, every argument by keyword."""

import torch
from _run import compile_run

import w4kit


class KwProj(torch.nn.Module):
    def __init__(self, d_in=64, d_out=32):
        super().__init__()
        w = torch.randn(d_out, d_in) * 0.1
        q, s, z = w4kit.quantize_w4(w, group_size=32)
        self.register_buffer("qweight", q)
        self.register_buffer("scales", s)
        self.register_buffer("zeros", z)
        self.bias = torch.nn.Parameter(torch.zeros(d_out))

    def forward(self, x):
        h = w4kit.w4_gemm(x=x, qweight=self.qweight, scales=self.scales, zeros=self.zeros, group_size=32, bias=self.bias)
        return torch.nn.functional.silu(h)


def main():
    torch.manual_seed(0)
    compile_run(KwProj(), torch.randn(3, 64))


if __name__ == "__main__":
    main()
