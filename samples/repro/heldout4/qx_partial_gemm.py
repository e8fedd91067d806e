"""A LoRA-style head: the base int8 GEMM is bound once with functools.partial in __init__ and called in forward."""

import functools

import torch
from _run import compile_run

import quantix


class PartialHead(torch.nn.Module):
    def __init__(self, d=32, vocab=48, rank=4):
        super().__init__()
        w = torch.randn(vocab, d) / d ** 0.5
        scale = w.abs().amax(dim=1) / 127.0
        self.register_buffer("w_q", torch.round(w / scale[:, None]).to(torch.int8))
        self.register_buffer("w_scale", scale)
        self.base = functools.partial(quantix.int8_gemm, b_q=self.w_q, b_scale=self.w_scale)
        self.lora_a = torch.nn.Linear(d, rank, bias=False)
        self.lora_b = torch.nn.Linear(rank, vocab, bias=False)

    def forward(self, x):
        return self.base(x) + 0.5 * self.lora_b(self.lora_a(x))


if __name__ == "__main__":
    torch.manual_seed(0)
    compile_run(PartialHead(), torch.randn(3, 32))
