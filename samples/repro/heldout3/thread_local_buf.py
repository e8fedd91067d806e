"""A layer that keeps its scratch buffer in a threading.local(), made on first use in each thread."""

import threading

import torch
from _run import compile_run

_TLS = threading.local()


class ScratchLinear(torch.nn.Module):
    def __init__(self, d=16):
        super().__init__()
        self.lin = torch.nn.Linear(d, d)

    def forward(self, x):
        buf = getattr(_TLS, "buf", None)
        if buf is None or buf.shape != x.shape:
            buf = torch.zeros_like(x)
            _TLS.buf = buf
        return self.lin(x) + buf


if __name__ == "__main__":
    torch.manual_seed(0)
    compile_run(ScratchLinear(), torch.randn(4, 16))
