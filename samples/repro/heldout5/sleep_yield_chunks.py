"""Chunked prefill that yields the GIL between chunks with time.sleep(0) so the scheduler thread can run."""

import time

import torch
from _run import compile_run


class ChunkedPrefill(torch.nn.Module):
    def __init__(self, d=16, chunk=4):
        super().__init__()
        self.layer = torch.nn.Linear(d, d)
        self.chunk = chunk

    def forward(self, x):
        outs = []
        for start in range(0, x.shape[0], self.chunk):
            outs.append(torch.relu(self.layer(x[start:start + self.chunk])))
            time.sleep(0)
        return torch.cat(outs)


def main():
    torch.manual_seed(0)
    compile_run(ChunkedPrefill(), torch.randn(10, 16))


if __name__ == "__main__":
    main()
