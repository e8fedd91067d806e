"""Stochastic depth at inference time with a seeded Python random.Random: each block is kept with p=0.8."""

import random

import torch
from _run import compile_run


class DropPathStack(torch.nn.Module):
    def __init__(self, d=16, n=4, p=0.8):
        super().__init__()
        self.blocks = torch.nn.ModuleList(torch.nn.Linear(d, d) for _ in range(n))
        self.p = p

    def forward(self, x):
        rng = random.Random(1234)
        for block in self.blocks:
            if rng.random() < self.p:
                x = x + torch.relu(block(x))
        return x


if __name__ == "__main__":
    torch.manual_seed(0)
    compile_run(DropPathStack(), torch.randn(4, 16))
