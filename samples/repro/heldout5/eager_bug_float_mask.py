"""Causal mask built as a float triu (0./1.) and passed to masked_fill, which wants a bool mask: fails in eager too."""

import torch
from _run import compile_run


class CausalScores(torch.nn.Module):
    def __init__(self, d=16):
        super().__init__()
        self.qk = torch.nn.Linear(d, 2 * d)

    def forward(self, x):
        q, k = self.qk(x).chunk(2, dim=-1)
        s = q @ k.t() / q.shape[-1] ** 0.5
        mask = torch.ones(s.shape).triu(1)
        return torch.softmax(s.masked_fill(mask, float("-inf")), dim=-1)


def main():
    torch.manual_seed(0)
    compile_run(CausalScores(), torch.randn(5, 16))


if __name__ == "__main__":
    main()
