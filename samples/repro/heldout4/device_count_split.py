"""Splits heads into tensor-parallel groups sized by torch.cuda.device_count() (at least one group on CPU)."""

import torch
from _run import compile_run


class HeadGroups(torch.nn.Module):
    def __init__(self, d=16, heads=4):
        super().__init__()
        self.qkv = torch.nn.Linear(d, 3 * d)
        self.heads = heads

    def forward(self, x):
        groups = max(torch.cuda.device_count(), 1)
        q, k, v = self.qkv(x).chunk(3, dim=-1)
        outs = []
        for qg, kg, vg in zip(q.chunk(groups, -1), k.chunk(groups, -1), v.chunk(groups, -1)):
            s = qg @ kg.transpose(0, 1) / qg.shape[-1] ** 0.5
            outs.append(s.softmax(-1) @ vg)
        return torch.cat(outs, dim=-1)


if __name__ == "__main__":
    torch.manual_seed(0)
    compile_run(HeadGroups(), torch.randn(5, 16))
