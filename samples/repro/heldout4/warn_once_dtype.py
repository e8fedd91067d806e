"""A bf16 serving layer that warns once per process (a module-level flag) when it is fed float32 input."""

import warnings

import torch
from _run import compile_run

_WARNED_FP32 = False


class CastingLayer(torch.nn.Module):
    def __init__(self, d=16):
        super().__init__()
        self.proj = torch.nn.Linear(d, d).to(torch.bfloat16)

    def forward(self, x):
        global _WARNED_FP32
        if x.dtype == torch.float32 and not _WARNED_FP32:
            warnings.warn("CastingLayer got float32 input; casting to bfloat16 (slower, set dtype in the request)")
            _WARNED_FP32 = True
        return self.proj(x.to(torch.bfloat16)).float()


if __name__ == "__main__":
    torch.manual_seed(0)
    compile_run(CastingLayer(), torch.randn(4, 16))
