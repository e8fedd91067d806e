"""Attention heads split with a view whose head size is wrong: it fails in eager too (a bug in the model)."""

import torch
from _run import compile_run


class HeadSplit(torch.nn.Module):
    def __init__(self, d=24, heads=5):
        super().__init__()
        self.qkv = torch.nn.Linear(d, d)
        self.heads = heads

    def forward(self, x):
        b, t, d = x.shape
        return self.qkv(x).view(b, t, self.heads, d // self.heads).transpose(1, 2)


if __name__ == "__main__":
    torch.manual_seed(0)
    compile_run(HeadSplit(), torch.randn(2, 3, 24))
