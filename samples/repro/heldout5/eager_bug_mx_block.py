"""A 48-wide head quantized with mxkern.mxfp4_quantize: 48 is not a multiple of the 32-wide block (fails in eager too)."""

import torch
from _run import compile_run

import mxkern


class HeadQuant(torch.nn.Module):
    def __init__(self, d=64, head_dim=48):
        super().__init__()
        self.q = torch.nn.Linear(d, head_dim)

    def forward(self, x):
        packed, scales = mxkern.mxfp4_quantize(self.q(x))
        return mxkern.mxfp4_dequantize(packed, scales)


def main():
    torch.manual_seed(0)
    compile_run(HeadQuant(), torch.randn(4, 64))


if __name__ == "__main__":
    main()
