"""Per-layer output scales read with the csv module from layer_scales.csv (next to the model) in forward."""

import csv
import os

import torch
from _run import compile_run

TABLE = os.path.join(os.path.dirname(os.path.abspath(__file__)), "layer_scales.csv")


def layer_scale(i: int) -> float:
    with open(TABLE, newline="", encoding="utf-8") as f:
        for row in csv.DictReader(f):
            if int(row["layer"]) == i:
                return float(row["scale"])
    return 1.0


class ScaledStack(torch.nn.Module):
    def __init__(self, d=16, n=3):
        super().__init__()
        self.layers = torch.nn.ModuleList(torch.nn.Linear(d, d) for _ in range(n))

    def forward(self, x):
        for i, layer in enumerate(self.layers):
            x = torch.tanh(layer(x)) * layer_scale(i)
        return x


if __name__ == "__main__":
    torch.manual_seed(0)
    compile_run(ScaledStack(), torch.randn(4, 16))
