"""Rotary tables built lazily, once per length, in a module-level cache guarded by a threading.Lock
(double-checked locking, as a thread-safe server would write it)."""

import threading

import torch
from _run import compile_run

_TABLES: dict = {}
_TABLES_LOCK = threading.Lock()


def rope_table(seq_len: int, dim: int) -> torch.Tensor:
    key = (seq_len, dim)
    if key not in _TABLES:
        with _TABLES_LOCK:
            if key not in _TABLES:
                inv = 1.0 / (10000 ** (torch.arange(0, dim, 2).float() / dim))
                _TABLES[key] = torch.outer(torch.arange(seq_len).float(), inv)
    return _TABLES[key]


class Rotary(torch.nn.Module):
    def forward(self, x):
        ang = rope_table(x.shape[-2], x.shape[-1])
        x1, x2 = x[..., 0::2], x[..., 1::2]
        return torch.cat([x1 * ang.cos() - x2 * ang.sin(), x1 * ang.sin() + x2 * ang.cos()], -1)


if __name__ == "__main__":
    torch.manual_seed(0)
    compile_run(Rotary(), torch.randn(2, 6, 8))
