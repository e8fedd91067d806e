"""Gathers KV pages by a page table and masks padding (pure tensor code: compiles as is)."""

import torch
from _run import compile_run


class PagedGather(torch.nn.Module):
    def __init__(self, page=4, d=8):
        super().__init__()
        self.page = page
        self.q = torch.nn.Linear(d, d)

    def forward(self, x, pages, table, lens):
        kv = pages[table].flatten(1, 2)
        pos = torch.arange(kv.shape[1])
        s = torch.einsum("bd,btd->bt", self.q(x), kv).masked_fill(pos[None] >= lens[:, None], float("-inf"))
        return torch.einsum("bt,btd->bd", s.softmax(-1), kv)


if __name__ == "__main__":
    torch.manual_seed(0)
    compile_run(PagedGather(), torch.randn(2, 8), torch.randn(5, 4, 8), torch.tensor([[0, 3], [2, 4]]),
                torch.tensor([6, 8]))
