"""A quantizer config object (a dataclass with __call__) held by the module calls mxkern for the activations."""

import dataclasses

import torch
from _run import compile_run

import mxkern


@dataclasses.dataclass
class MXActQuantizer:
    block_size: int = 32
    enabled: bool = True

    def __call__(self, x):
        if not self.enabled:
            return x
        packed, scales = mxkern.mxfp4_quantize(x, block_size=self.block_size)
        return mxkern.mxfp4_dequantize(packed, scales, dtype=x.dtype)


class QuantAttnOut(torch.nn.Module):
    def __init__(self, d=64):
        super().__init__()
        self.o_proj = torch.nn.Linear(d, d)
        self.act_quant = MXActQuantizer()

    def forward(self, attn):
        return self.o_proj(self.act_quant(attn))


def main():
    torch.manual_seed(0)
    compile_run(QuantAttnOut(), torch.randn(3, 64))


if __name__ == "__main__":
    main()
