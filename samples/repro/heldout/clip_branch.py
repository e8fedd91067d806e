"""Activations rescaled when their peak is large: a Python branch on a tensor's .item()."""

import torch
from _run import compile_run


class ClipScale(torch.nn.Module):
    def __init__(self, d=16):
        super().__init__()
        self.lin = torch.nn.Linear(d, d)

    def forward(self, x):
        y = self.lin(x) * 8
        if y.abs().max().item() > 10.0:
            y = y / 10.0
        return torch.tanh(y)


if __name__ == "__main__":
    torch.manual_seed(0)
    compile_run(ClipScale(), torch.randn(4, 16))
