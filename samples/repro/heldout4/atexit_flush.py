"""A stats-collecting layer that registers an atexit flush of its counters on its first forward call."""

import atexit

import torch
from _run import compile_run


class StatsLayer(torch.nn.Module):
    def __init__(self, d=16):
        super().__init__()
        self.proj = torch.nn.Linear(d, d)
        self.rows = 0
        self._registered = False

    def _flush(self):
        pass  # the server writes self.rows to its metrics file here

    def forward(self, x):
        if not self._registered:
            atexit.register(self._flush)
            self._registered = True
        self.rows += x.shape[0]
        return torch.tanh(self.proj(x))


if __name__ == "__main__":
    torch.manual_seed(0)
    compile_run(StatsLayer(), torch.randn(4, 16))
