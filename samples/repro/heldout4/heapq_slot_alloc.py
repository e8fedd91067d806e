"""A KV-cache writer that takes the lowest free slot from a heapq free list for each new token."""

import heapq

import torch
from _run import compile_run


class SlotKV(torch.nn.Module):
    def __init__(self, slots=8, d=8):
        super().__init__()
        self.register_buffer("cache", torch.zeros(slots, d))
        self.free = list(range(slots))
        heapq.heapify(self.free)
        self.k = torch.nn.Linear(d, d)

    def forward(self, x):
        k = self.k(x)
        slots = [heapq.heappop(self.free) for _ in range(x.shape[0])]
        cache = self.cache.index_copy(0, torch.tensor(slots), k)
        return cache


if __name__ == "__main__":
    torch.manual_seed(0)
    compile_run(SlotKV(), torch.randn(3, 8))
