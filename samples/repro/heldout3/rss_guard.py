"""A layer that drops its activation cache when the process's peak RSS (resource.getrusage) is above a limit."""

import resource

import torch
from _run import compile_run


class RssGuard(torch.nn.Module):
    def __init__(self, d=16, limit_kb=64 * 1024 * 1024):
        super().__init__()
        self.lin = torch.nn.Linear(d, d)
        self.limit_kb = limit_kb
        self.keep = True

    def forward(self, x):
        self.keep = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss < self.limit_kb
        return torch.nn.functional.silu(self.lin(x))


if __name__ == "__main__":
    torch.manual_seed(0)
    compile_run(RssGuard(), torch.randn(4, 16))
