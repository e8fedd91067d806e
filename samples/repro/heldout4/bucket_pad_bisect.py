"""Pads the batch up to the next captured CUDA-graph batch size, found with bisect over the capture sizes."""

import bisect

import torch
from _run import compile_run

CAPTURE_SIZES = [1, 2, 4, 8, 16, 32]


class PaddedRunner(torch.nn.Module):
    def __init__(self, d=16):
        super().__init__()
        self.body = torch.nn.Sequential(torch.nn.Linear(d, d), torch.nn.GELU(), torch.nn.Linear(d, d))

    def forward(self, x):
        n = x.shape[0]
        padded = CAPTURE_SIZES[bisect.bisect_left(CAPTURE_SIZES, n)]
        xp = torch.nn.functional.pad(x, (0, 0, 0, padded - n))
        return self.body(xp)[:n]


if __name__ == "__main__":
    torch.manual_seed(0)
    compile_run(PaddedRunner(), torch.randn(5, 16))
