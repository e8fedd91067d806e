"""A KV block moved to shared memory with share_memory_() in forward, so a worker process can read it."""

import torch
from _run import compile_run


class SharedKV(torch.nn.Module):
    def __init__(self, d=8):
        super().__init__()
        self.kv = torch.nn.Linear(d, 2 * d)

    def forward(self, x):
        kv = self.kv(x).detach().clone().share_memory_()
        k, v = kv.chunk(2, dim=-1)
        return k * v


def main():
    torch.manual_seed(0)
    compile_run(SharedKV(), torch.randn(3, 8))


if __name__ == "__main__":
    main()
