"""A depthwise conv + group norm + SiLU block with plain tensor code (expected to compile as is)."""

import torch
from _run import compile_run


class ConvBlock(torch.nn.Module):
    def __init__(self, c=8):
        super().__init__()
        self.dw = torch.nn.Conv1d(c, c, 3, padding=1, groups=c)
        self.gn = torch.nn.GroupNorm(2, c)

    def forward(self, x):
        return x + torch.nn.functional.silu(self.gn(self.dw(x)))


if __name__ == "__main__":
    torch.manual_seed(0)
    compile_run(ConvBlock(), torch.randn(2, 8, 10))
