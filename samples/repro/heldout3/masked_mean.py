"""The mean of the activations above a threshold, through boolean-mask indexing (x[x > t], data-dependent)."""

import torch
from _run import compile_run


class ActiveMean(torch.nn.Module):
    def __init__(self, d=16):
        super().__init__()
        self.lin = torch.nn.Linear(d, d)

    def forward(self, x):
        y = self.lin(x)
        active = y[y > 0.1]
        return y - active.mean()


if __name__ == "__main__":
    torch.manual_seed(0)
    compile_run(ActiveMean(), torch.randn(4, 16))
