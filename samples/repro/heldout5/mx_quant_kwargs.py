"""Activation fake-quant through mxkern with its options passed by keyword (block_size, scale_format, dtype)."""

import torch
from _run import compile_run

import mxkern


class ActFakeQuant(torch.nn.Module):
    def __init__(self, d=96):
        super().__init__()
        self.proj = torch.nn.Linear(d, d)

    def forward(self, x):
        h = self.proj(x)
        packed, scales = mxkern.mxfp4_quantize(h, block_size=32, scale_format="e8m0")
        return mxkern.mxfp4_dequantize(packed, scales, dtype=torch.bfloat16)


def main():
    torch.manual_seed(0)
    compile_run(ActFakeQuant(), torch.randn(5, 96))


if __name__ == "__main__":
    main()
