"""Token dropping for training with a seeded random.Random instance held by the module (not the global RNG)."""

import random

import torch
from _run import compile_run


class TokenDrop(torch.nn.Module):
    def __init__(self, d=8, p=0.5):
        super().__init__()
        self.fc = torch.nn.Linear(d, d)
        self.rng = random.Random(1234)
        self.p = p

    def forward(self, x):
        keep = [i for i in range(x.shape[0]) if self.rng.random() >= self.p] or [0]
        return self.fc(x[keep])


def main():
    torch.manual_seed(0)
    compile_run(TokenDrop(), torch.randn(6, 8))


if __name__ == "__main__":
    main()
