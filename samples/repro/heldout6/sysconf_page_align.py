"""KV block rows rounded up to the host page size, read with os.sysconf("SC_PAGE_SIZE") in forward."""

import os

import torch
from _run import compile_run


class PagedKV(torch.nn.Module):
    def __init__(self, d=16):
        super().__init__()
        self.kv = torch.nn.Linear(d, d)

    def forward(self, x):
        page = os.sysconf("SC_PAGE_SIZE")
        rows_per_page = max(1, page // (x.shape[-1] * x.element_size()))
        rows = -(-x.shape[0] // rows_per_page) * rows_per_page
        out = x.new_zeros(rows, x.shape[-1])
        out[: x.shape[0]] = self.kv(x)
        return out


def main():
    torch.manual_seed(0)
    compile_run(PagedKV(), torch.randn(3, 16))


if __name__ == "__main__":
    main()
