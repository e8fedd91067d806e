"""A feed-forward layer applied chunk by chunk, the chunks yielded by a generator."""

import torch
from _run import compile_run


def chunks(x, size):
    start = 0
    while start < x.shape[0]:
        yield x[start:start + size]
        start += size


class ChunkedFFN(torch.nn.Module):
    def __init__(self, d=16):
        super().__init__()
        self.ff = torch.nn.Sequential(torch.nn.Linear(d, 2 * d), torch.nn.ReLU(), torch.nn.Linear(2 * d, d))

    def forward(self, x):
        it = chunks(x, 3)
        out = [self.ff(next(it))]
        for c in it:
            out.append(self.ff(c))
        return torch.cat(out)


if __name__ == "__main__":
    torch.manual_seed(0)
    compile_run(ChunkedFFN(), torch.randn(8, 16))
