"""K/V projections stored MXFP4 through mxkern.mxfp4_quantize (a (packed, scales) tuple) and read back."""

import torch
from _run import compile_run

import mxkern


class MXKVProj(torch.nn.Module):
    def __init__(self, d=64):
        super().__init__()
        self.k = torch.nn.Linear(d, d, bias=False)
        self.v = torch.nn.Linear(d, d, bias=False)

    def forward(self, x):
        k_packed, k_scales = mxkern.mxfp4_quantize(self.k(x))
        v_packed, v_scales = mxkern.mxfp4_quantize(self.v(x))
        k = mxkern.mxfp4_dequantize(k_packed, k_scales)
        v = mxkern.mxfp4_dequantize(v_packed, v_scales)
        return k, v, k_scales


def main():
    torch.manual_seed(0)
    compile_run(MXKVProj(), torch.randn(6, 64))


if __name__ == "__main__":
    main()
