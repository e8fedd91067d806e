"""A chunked feed-forward over a generator pipeline: chunks are produced by a generator and mapped lazily."""

import torch
from _run import compile_run


def chunks(x, size):
    for start in range(0, x.shape[0], size):
        yield x[start:start + size]


class ChunkedFFN(torch.nn.Module):
    def __init__(self, d=16):
        super().__init__()
        self.fc = torch.nn.Linear(d, d)

    def forward(self, x):
        outs = map(lambda c: torch.relu(self.fc(c)), chunks(x, 3))
        return torch.cat(list(outs))


if __name__ == "__main__":
    torch.manual_seed(0)
    compile_run(ChunkedFFN(), torch.randn(8, 16))
