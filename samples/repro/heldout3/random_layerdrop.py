"""LayerDrop at inference with the stdlib random module (random.random per layer), seeded in __main__."""

import random

import torch
from _run import compile_run


class LayerDropStack(torch.nn.Module):
    def __init__(self, d=16, n=4, p=0.5):
        super().__init__()
        self.layers = torch.nn.ModuleList(torch.nn.Linear(d, d) for _ in range(n))
        self.p = p

    def forward(self, x):
        for layer in self.layers:
            if random.random() >= self.p:
                x = x + torch.tanh(layer(x))
        return x


if __name__ == "__main__":
    torch.manual_seed(0)
    random.seed(1234)
    compile_run(LayerDropStack(), torch.randn(4, 16))
