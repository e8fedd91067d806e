"""Learned per-shape scales looked up by a key made with pickle from the input's shape and dtype."""

import pickle

import torch
from _run import compile_run


def shape_key(x) -> bytes:
    return pickle.dumps((tuple(x.shape), str(x.dtype)))


class PerShape(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.scales = {}

    def forward(self, x):
        key = shape_key(x)
        scale = self.scales.get(key, 0.5)
        return x * scale


if __name__ == "__main__":
    torch.manual_seed(0)
    compile_run(PerShape(), torch.randn(4, 16))
