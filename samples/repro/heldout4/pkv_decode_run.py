"""One decode step of paged attention: the pagedkv wrapper is planned on the host, its run() called in forward."""

import torch
from _run import compile_run

import pagedkv

PAGE, HEADS, DIM = 4, 2, 8


class DecodeAttn(torch.nn.Module):
    def __init__(self, wrapper, d=16):
        super().__init__()
        self.wrapper = wrapper
        self.q_proj = torch.nn.Linear(d, HEADS * DIM)
        self.o_proj = torch.nn.Linear(HEADS * DIM, d)

    def forward(self, x, k_pages, v_pages):
        q = self.q_proj(x).view(x.shape[0], HEADS, DIM)
        o = self.wrapper.run(q, k_pages, v_pages)
        return self.o_proj(o.reshape(x.shape[0], HEADS * DIM))


if __name__ == "__main__":
    torch.manual_seed(0)
    k_pages, v_pages = torch.randn(6, PAGE, HEADS, DIM), torch.randn(6, PAGE, HEADS, DIM)
    wrapper = pagedkv.DecodeWrapper(PAGE, HEADS, DIM)
    wrapper.plan(torch.tensor([[0, 2], [1, 3], [4, 5]]), torch.tensor([7, 5, 8]))
    compile_run(DecodeAttn(wrapper), torch.randn(3, 16), k_pages, v_pages)
