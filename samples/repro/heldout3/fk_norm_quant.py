"""A decoder sublayer whose pre-norm is fastkern's fused RMSNorm + int8 quantization (the FlashInfer-like chain:
a platform tag through platform.libc_ver, a prebuilt-kernel os.path check, a manifest read from disk)."""

import torch
from _run import compile_run

import fastkern


class NormQuantProj(torch.nn.Module):
    def __init__(self, d=32):
        super().__init__()
        self.norm_w = torch.nn.Parameter(torch.ones(d))
        self.proj = torch.nn.Linear(d, d)

    def forward(self, x):
        q, s = fastkern.rmsnorm_quant(x, self.norm_w, 1e-6)
        return self.proj(q.to(torch.float32) * s), s


if __name__ == "__main__":
    torch.manual_seed(0)
    compile_run(NormQuantProj(), torch.randn(4, 32))
