"""A KV buffer grown in place with self.kv.resize_() when a longer sequence arrives."""

import torch
from _run import compile_run


class GrowingCache(torch.nn.Module):
    def __init__(self, d=8):
        super().__init__()
        self.proj = torch.nn.Linear(d, d)
        self.register_buffer("kv", torch.zeros(2, d))

    def forward(self, x):
        if x.shape[0] > self.kv.shape[0]:
            self.kv.resize_(x.shape[0], x.shape[1])
        self.kv[: x.shape[0]] = self.proj(x)
        return self.kv[: x.shape[0]].clone()


def main():
    torch.manual_seed(0)
    compile_run(GrowingCache(), torch.randn(5, 8))


if __name__ == "__main__":
    main()
