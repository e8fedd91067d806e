"""A decoder block whose pre-norm is kernelhub's fused RMSNorm + int8 quantisation (the FlashInfer-like chain:
a version probe under lru_cache, a cache directory, a file lock)."""

import torch
from _run import compile_run

import kernelhub


class QuantBlock(torch.nn.Module):
    def __init__(self, d=32):
        super().__init__()
        self.norm_weight = torch.nn.Parameter(torch.ones(d))
        self.proj = torch.nn.Linear(d, d)

    def forward(self, x):
        q, scale = kernelhub.fused_rmsnorm_quant(x, self.norm_weight, eps=1e-5)
        return x + self.proj(q.float() * scale)


if __name__ == "__main__":
    torch.manual_seed(0)
    compile_run(QuantBlock(), torch.randn(2, 8, 32))
