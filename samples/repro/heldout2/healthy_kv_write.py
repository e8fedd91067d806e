"""A KV cache written in place with index_copy_ into a registered buffer (should compile as it is)."""

import torch
from _run import compile_run


class KVCache(torch.nn.Module):
    def __init__(self, slots=8, d=4):
        super().__init__()
        self.register_buffer("k", torch.zeros(slots, d))

    def forward(self, pos, k_new):
        self.k.index_copy_(0, pos, k_new)
        return self.k.sum(0), self.k.clone()


if __name__ == "__main__":
    torch.manual_seed(0)
    compile_run(KVCache(), torch.tensor([1, 3]), torch.randn(2, 4))
