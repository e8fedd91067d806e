"""Deterministic per-layer noise from a torch.Generator seeded in forward."""

import torch
from _run import compile_run


class SeededNoise(torch.nn.Module):
    def __init__(self, d=8, seed=42):
        super().__init__()
        self.fc = torch.nn.Linear(d, d)
        self.seed = seed

    def forward(self, x):
        g = torch.Generator().manual_seed(self.seed)
        return self.fc(x) + 0.01 * torch.randn(x.shape, generator=g)


if __name__ == "__main__":
    torch.manual_seed(0)
    compile_run(SeededNoise(), torch.randn(4, 8))
