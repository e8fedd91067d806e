"""A lazily sized output layer: its weight is created as an nn.Parameter on the first forward call."""

import torch
from _run import compile_run


class LazyHead(torch.nn.Module):
    def __init__(self, out_features=4):
        super().__init__()
        self.out_features = out_features
        self.weight = None

    def forward(self, x):
        if self.weight is None:
            g = torch.Generator().manual_seed(1)
            self.weight = torch.nn.Parameter(torch.randn(self.out_features, x.shape[-1], generator=g) * 0.1)
        return x @ self.weight.t()


if __name__ == "__main__":
    torch.manual_seed(0)
    compile_run(LazyHead(), torch.randn(3, 12))
