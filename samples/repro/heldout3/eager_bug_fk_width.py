"""fastkern's fused RMSNorm called on a width below its kernel's minimum: the library rejects it, in eager too."""

import torch
from _run import compile_run

import fastkern


class TinyNorm(torch.nn.Module):
    def __init__(self, d=4):
        super().__init__()
        self.w = torch.nn.Parameter(torch.ones(d))

    def forward(self, x):
        q, s = fastkern.rmsnorm_quant(x, self.w)
        return q.to(torch.float32) * s


if __name__ == "__main__":
    torch.manual_seed(0)
    compile_run(TinyNorm(), torch.randn(3, 4))
