"""A SwiGLU MLP that calls fastkern.silu_and_mul with a preallocated `out=` buffer (the FlashInfer-like chain)."""

import torch
from _run import compile_run

import fastkern


class SwiGLU(torch.nn.Module):
    def __init__(self, d=16, h=32):
        super().__init__()
        self.gate_up = torch.nn.Linear(d, 2 * h, bias=False)
        self.down = torch.nn.Linear(h, d, bias=False)

    def forward(self, x):
        gu = self.gate_up(x)
        buf = torch.empty(gu.shape[0], gu.shape[1] // 2, dtype=gu.dtype)
        fastkern.silu_and_mul(gu, out=buf)
        return self.down(buf)


if __name__ == "__main__":
    torch.manual_seed(0)
    compile_run(SwiGLU(), torch.randn(6, 16))
