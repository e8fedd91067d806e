"""Chunked prefill (time.sleep(0) between chunks) that joins the chunk outputs along the wrong dim: fails in eager too."""

import time

import torch
from _run import compile_run


class ChunkedEncoder(torch.nn.Module):
    def __init__(self, d=16, chunk=4):
        super().__init__()
        self.layer = torch.nn.Linear(d, d)
        self.chunk = chunk

    def forward(self, x):
        outs = []
        for start in range(0, x.shape[0], self.chunk):
            time.sleep(0)
            outs.append(torch.relu(self.layer(x[start:start + self.chunk])))
        return torch.cat(outs, dim=1)        # the last chunk has 2 rows, the others 4


def main():
    torch.manual_seed(0)
    compile_run(ChunkedEncoder(), torch.randn(10, 16))


if __name__ == "__main__":
    main()
