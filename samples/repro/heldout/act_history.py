"""A layer that keeps a history of its per-row mean activations as Python floats."""

import torch
from _run import compile_run


class Tracked(torch.nn.Module):
    def __init__(self, d=16):
        super().__init__()
        self.lin = torch.nn.Linear(d, d)
        self.history = []

    def forward(self, x):
        y = torch.relu(self.lin(x))
        means = y.mean(dim=1).tolist()
        self.history.append(means)
        return y


if __name__ == "__main__":
    torch.manual_seed(0)
    compile_run(Tracked(), torch.randn(4, 16))
