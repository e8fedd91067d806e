"""A layer that counts its calls under a lock (shared with a metrics thread)."""

import threading

import torch
from _run import compile_run


class CountedLinear(torch.nn.Module):
    def __init__(self, d=16):
        super().__init__()
        self.lin = torch.nn.Linear(d, d)
        self.calls = 0
        self._lock = threading.Lock()

    def forward(self, x):
        with self._lock:
            self.calls += 1
        return self.lin(x)


if __name__ == "__main__":
    torch.manual_seed(0)
    compile_run(CountedLinear(), torch.randn(4, 16))
