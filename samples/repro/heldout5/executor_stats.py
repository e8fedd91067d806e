"""Host-side stats handed to a ThreadPoolExecutor (executor.submit) from forward, so they do not block decode."""

import concurrent.futures

import torch
from _run import compile_run


class OffloadedStats(torch.nn.Module):
    def __init__(self, d=16):
        super().__init__()
        self.proj = torch.nn.Linear(d, d)
        self.pool = concurrent.futures.ThreadPoolExecutor(max_workers=1)
        self.history = []

    def _record(self, shape):
        self.history.append(shape)

    def forward(self, x):
        y = self.proj(x)
        self.pool.submit(self._record, tuple(y.shape))
        return torch.nn.functional.silu(y)


def main():
    torch.manual_seed(0)
    m = OffloadedStats()
    compile_run(m, torch.randn(4, 16))
    m.pool.shutdown(wait=True)


if __name__ == "__main__":
    main()
