"""MoE router with multiplicative jitter from a module-owned random.Random (seeded, so runs are repeatable)."""

import random

import torch
from _run import compile_run


class JitterRouter(torch.nn.Module):
    def __init__(self, d=16, experts=4, jitter=0.01):
        super().__init__()
        self.gate = torch.nn.Linear(d, experts, bias=False)
        self.experts = torch.nn.ModuleList(torch.nn.Linear(d, d) for _ in range(experts))
        self.rng = random.Random(1234)
        self.jitter = jitter

    def forward(self, x):
        noise = 1.0 + self.rng.uniform(-self.jitter, self.jitter)
        w = torch.softmax(self.gate(x * noise), dim=-1)
        return sum(w[:, i : i + 1] * e(x) for i, e in enumerate(self.experts))


if __name__ == "__main__":
    torch.manual_seed(0)
    compile_run(JitterRouter(), torch.randn(4, 16))
