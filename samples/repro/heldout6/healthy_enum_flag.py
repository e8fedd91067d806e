"""Optional features combined as an enum.Flag (ROPE | GATE) from a config list, tested with `in` inside forward."""

import enum
import functools
import operator

import torch
from _run import compile_run


class Feature(enum.Flag):
    NONE = 0
    ROPE = enum.auto()
    BIAS = enum.auto()
    GATE = enum.auto()


class Layer(torch.nn.Module):
    def __init__(self, d=8, features=("ROPE", "GATE")):
        super().__init__()
        self.fc = torch.nn.Linear(d, d)
        self.features = features

    def forward(self, x):
        flags = functools.reduce(operator.or_, (Feature[f] for f in self.features), Feature.NONE)
        h = self.fc(x)
        if Feature.GATE in flags:
            h = h * torch.sigmoid(h)
        if Feature.ROPE in flags:
            h = torch.roll(h, 1, dims=-1)
        return h


def main():
    torch.manual_seed(0)
    compile_run(Layer(), torch.randn(3, 8))


if __name__ == "__main__":
    main()
