"""Rotary embedding whose cos/sin tables are cached per length in a dict guarded by a threading.RLock."""

import threading

import torch
from _run import compile_run


class CachedRope(torch.nn.Module):
    def __init__(self, dim=8, base=10000.0):
        super().__init__()
        self.register_buffer("inv_freq", 1.0 / base ** (torch.arange(0, dim, 2).float() / dim))
        self._lock = threading.RLock()
        self._tables: dict[int, tuple[torch.Tensor, torch.Tensor]] = {}

    def _table(self, n):
        with self._lock:
            if n not in self._tables:
                f = torch.outer(torch.arange(n).float(), self.inv_freq)
                self._tables[n] = (f.cos(), f.sin())
            return self._tables[n]

    def forward(self, x):
        cos, sin = self._table(x.shape[0])
        x1, x2 = x[..., 0::2], x[..., 1::2]
        return torch.cat([x1 * cos - x2 * sin, x1 * sin + x2 * cos], dim=-1)


if __name__ == "__main__":
    torch.manual_seed(0)
    compile_run(CachedRope(), torch.randn(6, 8))
