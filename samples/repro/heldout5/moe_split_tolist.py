"""MoE dispatch: tokens sorted by expert, then x.split(torch.bincount(ids).tolist()) into per-expert chunks."""

import torch
from _run import compile_run


class SortedMoE(torch.nn.Module):
    def __init__(self, d=16, n_experts=4):
        super().__init__()
        self.router = torch.nn.Linear(d, n_experts, bias=False)
        self.experts = torch.nn.ModuleList(torch.nn.Linear(d, d) for _ in range(n_experts))

    def forward(self, x):
        ids = self.router(x).argmax(-1)
        order = ids.argsort()
        counts = torch.bincount(ids, minlength=len(self.experts)).tolist()
        chunks = x[order].split(counts)
        out = torch.cat([e(c) for e, c in zip(self.experts, chunks)])
        return torch.empty_like(out).index_copy(0, order, out)


def main():
    torch.manual_seed(0)
    compile_run(SortedMoE(), torch.randn(9, 16))


if __name__ == "__main__":
    main()
