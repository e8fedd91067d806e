"""A plain SwiGLU feed-forward block (nothing unusual: it should compile as it is)."""

import torch
from _run import compile_run


class SwiGLU(torch.nn.Module):
    def __init__(self, d=16, hidden=32):
        super().__init__()
        self.w1 = torch.nn.Linear(d, hidden, bias=False)
        self.w3 = torch.nn.Linear(d, hidden, bias=False)
        self.w2 = torch.nn.Linear(hidden, d, bias=False)

    def forward(self, x):
        return self.w2(torch.nn.functional.silu(self.w1(x)) * self.w3(x))


if __name__ == "__main__":
    torch.manual_seed(0)
    compile_run(SwiGLU(), torch.randn(4, 16))
