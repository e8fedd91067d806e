"""The int4 weight is quantized from the transposed matrix (K, N) instead of (N, K): w4_gemm's feature check fails in eager too."""

import torch
from _run import compile_run

import w4kit


class DownProj(torch.nn.Module):
    def __init__(self, d_in=96, d_out=64):
        super().__init__()
        w = torch.randn(d_out, d_in) * 0.1
        self.q, self.s, self.z = w4kit.quantize_w4(w.t().contiguous())     # bug: should be w
        self.d_out = d_out

    def forward(self, x):
        return w4kit.w4_gemm(x, self.q, self.s, self.z)


def main():
    torch.manual_seed(0)
    compile_run(DownProj(), torch.randn(2, 96))


if __name__ == "__main__":
    main()
