"""A rotary table cache read with `with contextlib.suppress(KeyError): return cache[n]`, filled on a miss."""

import contextlib

import torch
from _run import compile_run


class Rotary(torch.nn.Module):
    def __init__(self, dim=16, base=10000.0):
        super().__init__()
        self.register_buffer("inv_freq", 1.0 / base ** (torch.arange(0, dim, 2).float() / dim))
        self._tables: dict[int, tuple[torch.Tensor, torch.Tensor]] = {}

    def _table(self, n):
        with contextlib.suppress(KeyError):
            return self._tables[n]
        f = torch.outer(torch.arange(n).float(), self.inv_freq)
        self._tables[n] = (f.cos(), f.sin())
        return self._tables[n]

    def forward(self, x):
        cos, sin = self._table(x.shape[0])
        x1, x2 = x.chunk(2, dim=-1)
        return torch.cat((x1 * cos - x2 * sin, x1 * sin + x2 * cos), dim=-1)


def main():
    torch.manual_seed(0)
    compile_run(Rotary(), torch.randn(6, 16))


if __name__ == "__main__":
    main()
