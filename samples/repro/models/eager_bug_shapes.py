"""A real bug, in eager too: the projection's width does not match the input (must be left untouched)."""

import torch
from _run import compile_run


class Head(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.w = torch.nn.Parameter(torch.randn(24, 8))

    def forward(self, x):
        print("head input", x.shape)
        return x @ self.w


if __name__ == "__main__":
    torch.manual_seed(0)
    compile_run(Head(), torch.randn(4, 16))
