"""An int8 projection whose weight was quantized transposed, so its scales do not match: fails in eager too."""

import torch
from _run import compile_run

import quantix


class TransposedInt8(torch.nn.Module):
    def __init__(self, d_in=32, d_out=16):
        super().__init__()
        w = torch.randn(d_out, d_in) / d_in ** 0.5
        scale = w.abs().amax(dim=0) / 127.0  # per input column: the wrong axis
        self.register_buffer("w_q", torch.round(w / scale[None, :]).to(torch.int8))
        self.register_buffer("w_scale", scale)

    def forward(self, x):
        return quantix.int8_gemm(x, self.w_q, self.w_scale)


if __name__ == "__main__":
    torch.manual_seed(0)
    compile_run(TransposedInt8(), torch.randn(4, 32))
