"""An attention input stage that rotates q and k with ropekit's fused op (ABI probe: ctypes, sysconfig, a cache file)."""

import torch
from _run import compile_run

import ropekit


class RopeQK(torch.nn.Module):
    def __init__(self, d=32, heads=4):
        super().__init__()
        self.heads = heads
        self.q = torch.nn.Linear(d, d, bias=False)
        self.k = torch.nn.Linear(d, d, bias=False)

    def forward(self, x, positions):
        t, d = x.shape
        q = self.q(x).view(t, self.heads, d // self.heads)
        k = self.k(x).view(t, self.heads, d // self.heads)
        q, k = ropekit.apply_rope(q, k, positions)
        return (q * k).sum(-1)


if __name__ == "__main__":
    torch.manual_seed(0)
    compile_run(RopeQK(), torch.randn(5, 32), torch.arange(5))
