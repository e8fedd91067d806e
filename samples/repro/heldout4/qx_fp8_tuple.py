"""A K/V projection whose output is stored FP8 through quantix.fp8_quantize (returns a (q, scale) tuple)."""

import torch
from _run import compile_run

import quantix


class FP8KVProj(torch.nn.Module):
    def __init__(self, d=32):
        super().__init__()
        self.kv = torch.nn.Linear(d, 2 * d, bias=False)

    def forward(self, x):
        k, v = self.kv(x).chunk(2, dim=-1)
        k_q, k_scale = quantix.fp8_quantize(k)
        v_q, v_scale = quantix.fp8_quantize(v)
        return k_q.float() * k_scale[:, None], v_q.float() * v_scale[:, None]


if __name__ == "__main__":
    torch.manual_seed(0)
    compile_run(FP8KVProj(), torch.randn(8, 32))
