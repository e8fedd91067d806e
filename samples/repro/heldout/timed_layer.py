"""A layer that records how long each forward took, in milliseconds, on itself."""

import time

import torch
from _run import compile_run


class TimedLinear(torch.nn.Module):
    def __init__(self, d=16):
        super().__init__()
        self.lin = torch.nn.Linear(d, d)
        self.last_ms = 0.0

    def forward(self, x):
        t0 = time.time()
        y = torch.relu(self.lin(x))
        self.last_ms = (time.time() - t0) * 1000.0
        return y


if __name__ == "__main__":
    torch.manual_seed(0)
    compile_run(TimedLinear(), torch.randn(4, 16))
