"""A KV-cache write with index_copy_ whose slot ids were made int32 for the kernel: fails in eager too."""

import torch
from _run import compile_run


class KVWrite(torch.nn.Module):
    def __init__(self, slots=12, d=8):
        super().__init__()
        self.register_buffer("k_cache", torch.zeros(slots, d))
        self.k_proj = torch.nn.Linear(d, d)

    def forward(self, x, slot_ids):
        self.k_cache.index_copy_(0, slot_ids.to(torch.int32), self.k_proj(x))
        return self.k_cache.clone()


if __name__ == "__main__":
    torch.manual_seed(0)
    compile_run(KVWrite(), torch.randn(3, 8), torch.tensor([4, 0, 9]))
