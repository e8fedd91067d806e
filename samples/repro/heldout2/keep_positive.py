"""Token pruning: keep only the rows whose router score is positive (torch.nonzero: a data-dependent shape)."""

import torch
from _run import compile_run


class KeepPositive(torch.nn.Module):
    def __init__(self, d=8):
        super().__init__()
        self.router = torch.nn.Linear(d, 1)

    def forward(self, x):
        keep = torch.nonzero(self.router(x).squeeze(-1) > 0).squeeze(-1)
        return x[keep] * 2.0


if __name__ == "__main__":
    torch.manual_seed(0)
    compile_run(KeepPositive(), torch.randn(10, 8))
