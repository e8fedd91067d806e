"""An NVFP4 linear layer calling the FlashInfer-like nvfp4_quantize with no eager warm-up (cold caches)."""

import torch
from _run import compile_run

import fakeinfer


class FP4Linear(torch.nn.Module):
    def __init__(self, k=128, n=32):
        super().__init__()
        self.weight = torch.nn.Parameter(torch.randn(n, k // 2))
        self.register_buffer("input_scale_inv", torch.tensor([448.0 * 6.0 / 4.0]))

    def forward(self, x):
        x_fp4, x_sf = fakeinfer.nvfp4_quantize(x, self.input_scale_inv)
        return x_fp4.float() @ self.weight.t() + x_sf[: x.shape[0]].float().sum()


if __name__ == "__main__":
    torch.manual_seed(0)
    compile_run(FP4Linear(), torch.randn(16, 128, dtype=torch.bfloat16))
