"""A decode layer that builds its pagedkv wrapper but never plans it before run(): fails in eager too."""

import torch
from _run import compile_run

import pagedkv

PAGE, HEADS, DIM = 4, 2, 8


class UnplannedDecode(torch.nn.Module):
    def __init__(self, d=16):
        super().__init__()
        self.wrapper = pagedkv.DecodeWrapper(PAGE, HEADS, DIM)
        self.q_proj = torch.nn.Linear(d, HEADS * DIM)

    def forward(self, x, k_pages, v_pages):
        q = self.q_proj(x).view(x.shape[0], HEADS, DIM)
        return self.wrapper.run(q, k_pages, v_pages)


if __name__ == "__main__":
    torch.manual_seed(0)
    compile_run(UnplannedDecode(), torch.randn(2, 16), torch.randn(4, PAGE, HEADS, DIM),
                torch.randn(4, PAGE, HEADS, DIM))
