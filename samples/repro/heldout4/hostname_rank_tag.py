"""A layer that tags its debug stats with socket.gethostname() and the rank, as multi-node serving logs do."""

import socket

import torch
from _run import compile_run


class TaggedLayer(torch.nn.Module):
    def __init__(self, d=16, rank=0):
        super().__init__()
        self.proj = torch.nn.Linear(d, d)
        self.rank = rank
        self.stats: dict[str, int] = {}

    def forward(self, x):
        tag = f"{socket.gethostname()}:{self.rank}"
        self.stats[tag] = self.stats.get(tag, 0) + x.shape[0]
        return torch.relu(self.proj(x))


if __name__ == "__main__":
    torch.manual_seed(0)
    compile_run(TaggedLayer(), torch.randn(4, 16))
