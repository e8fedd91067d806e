"""An int4 embedding table: rows gathered, then dequantized with the raw kernel reached as a module attribute (w4kit.ops.dequantize)."""

import torch
from _run import compile_run

import w4kit


class Int4Embedding(torch.nn.Module):
    def __init__(self, vocab=50, d=64):
        super().__init__()
        q, s, z = w4kit.quantize_w4(torch.randn(vocab, d))
        self.register_buffer("q", q)
        self.register_buffer("s", s)
        self.register_buffer("z", z)

    def forward(self, ids):
        rows = w4kit.ops.dequantize(self.q[ids], self.s[ids], self.z[ids], 32, torch.float32)
        return rows * (rows.shape[-1] ** 0.5)


def main():
    torch.manual_seed(0)
    compile_run(Int4Embedding(), torch.tensor([[3, 7, 7, 49], [0, 1, 2, 3]]))


if __name__ == "__main__":
    main()
