"""A projection whose weight has the wrong inner size: it fails in eager too (a bug in the model)."""

import torch
from _run import compile_run


class Proj(torch.nn.Module):
    def __init__(self, d=16):
        super().__init__()
        self.w = torch.nn.Parameter(torch.randn(d + 1, d))

    def forward(self, x):
        return x @ self.w


if __name__ == "__main__":
    torch.manual_seed(0)
    compile_run(Proj(), torch.randn(4, 16))
