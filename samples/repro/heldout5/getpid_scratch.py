"""A per-worker scratch buffer keyed by os.getpid() (forked dataloader/engine workers must not share it)."""

import os

import torch
from _run import compile_run

_SCRATCH: dict[int, torch.Tensor] = {}


class ScratchAttn(torch.nn.Module):
    def __init__(self, d=16):
        super().__init__()
        self.qkv = torch.nn.Linear(d, 3 * d)

    def forward(self, x):
        buf = _SCRATCH.get(os.getpid())
        if buf is None or buf.shape != (x.shape[0], x.shape[0]):
            buf = _SCRATCH[os.getpid()] = torch.empty(x.shape[0], x.shape[0])
        q, k, v = self.qkv(x).chunk(3, dim=-1)
        buf.copy_(q @ k.t())
        return torch.softmax(buf / q.shape[-1] ** 0.5, dim=-1) @ v


def main():
    torch.manual_seed(0)
    compile_run(ScratchAttn(), torch.randn(5, 16))


if __name__ == "__main__":
    main()
