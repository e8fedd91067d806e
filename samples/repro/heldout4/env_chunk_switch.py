"""Chunked prefill whose chunk size and on/off switch come from environment variables read in forward."""

import os

import torch
from _run import compile_run


class ChunkedPrefill(torch.nn.Module):
    def __init__(self, d=16):
        super().__init__()
        self.ffn = torch.nn.Sequential(torch.nn.Linear(d, 2 * d), torch.nn.GELU(), torch.nn.Linear(2 * d, d))

    def forward(self, x):
        if os.environ.get("SERVE_CHUNKED_PREFILL", "1") != "1":
            return self.ffn(x)
        chunk = int(os.environ.get("SERVE_PREFILL_CHUNK", "3"))
        return torch.cat([self.ffn(c) for c in x.split(chunk, dim=0)], dim=0)


if __name__ == "__main__":
    torch.manual_seed(0)
    compile_run(ChunkedPrefill(), torch.randn(8, 16))
