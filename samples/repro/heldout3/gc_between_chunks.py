"""A chunked MLP that calls gc.collect() between chunks to keep host memory down."""

import gc

import torch
from _run import compile_run


class ChunkedMLP(torch.nn.Module):
    def __init__(self, d=16, chunks=2):
        super().__init__()
        self.up = torch.nn.Linear(d, 4 * d)
        self.down = torch.nn.Linear(4 * d, d)
        self.chunks = chunks

    def forward(self, x):
        outs = []
        for part in x.chunk(self.chunks):
            outs.append(self.down(torch.relu(self.up(part))))
            gc.collect()
        return torch.cat(outs)


if __name__ == "__main__":
    torch.manual_seed(0)
    compile_run(ChunkedMLP(), torch.randn(6, 16))
