"""An int8 weight-only output projection: quantix.int8_gemm writes into a buffer allocated in forward (out=)."""

import torch
from _run import compile_run

import quantix


class Int8OutProj(torch.nn.Module):
    def __init__(self, d_in=32, d_out=16):
        super().__init__()
        w = torch.randn(d_out, d_in) / d_in ** 0.5
        scale = w.abs().amax(dim=1) / 127.0
        self.register_buffer("w_q", torch.round(w / scale[:, None]).to(torch.int8))
        self.register_buffer("w_scale", scale)

    def forward(self, x):
        out = torch.empty(x.shape[0], self.w_q.shape[0], dtype=x.dtype)
        quantix.int8_gemm(x, self.w_q, self.w_scale, out=out)
        return torch.nn.functional.gelu(out)


if __name__ == "__main__":
    torch.manual_seed(0)
    compile_run(Int8OutProj(), torch.randn(5, 32))
