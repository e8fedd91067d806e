"""Attention scores with einsum where K was split into 2 heads but Q into 4: the head axes disagree in eager too."""

import torch
from _run import compile_run


class Scores(torch.nn.Module):
    def __init__(self, d=16, q_heads=4, kv_heads=2):
        super().__init__()
        self.q = torch.nn.Linear(d, d)
        self.k = torch.nn.Linear(d, d)
        self.qh, self.kh = q_heads, kv_heads

    def forward(self, x):
        t = x.shape[0]
        q = self.q(x).view(t, self.qh, -1).transpose(0, 1)
        k = self.k(x).view(t, self.kh, -1).transpose(0, 1)      # bug: GQA needs repeat_interleave to q_heads
        return torch.einsum("hqd,hkd->hqk", q, k).softmax(-1)


def main():
    torch.manual_seed(0)
    compile_run(Scores(), torch.randn(5, 16))


if __name__ == "__main__":
    main()
