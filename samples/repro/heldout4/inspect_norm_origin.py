"""Chooses the fused residual-norm path when the norm class comes from an 'apex' module (inspect.getmodule)."""

import inspect

import torch
from _run import compile_run


class ResidualNorm(torch.nn.Module):
    def __init__(self, d=16):
        super().__init__()
        self.norm = torch.nn.LayerNorm(d)
        self.proj = torch.nn.Linear(d, d)

    def forward(self, x):
        h = self.proj(x)
        mod = inspect.getmodule(type(self.norm))
        if mod is not None and mod.__name__.startswith("apex"):
            return self.norm(x + h)
        return self.norm(x + h) * 1.0


if __name__ == "__main__":
    torch.manual_seed(0)
    compile_run(ResidualNorm(), torch.randn(4, 16))
