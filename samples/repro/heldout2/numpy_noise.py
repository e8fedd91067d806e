"""Noise injection with a seeded numpy Generator (np.random.default_rng) in forward."""

import numpy as np
import torch
from _run import compile_run


class NoisyLinear(torch.nn.Module):
    def __init__(self, d=8):
        super().__init__()
        self.fc = torch.nn.Linear(d, d)

    def forward(self, x):
        rng = np.random.default_rng(0)
        noise = torch.from_numpy(rng.standard_normal(x.shape).astype(np.float32))
        return self.fc(x + 0.01 * noise)


if __name__ == "__main__":
    torch.manual_seed(0)
    compile_run(NoisyLinear(), torch.randn(4, 8))
