"""Activations looked up in a registry of plain (non-module) objects, dispatched by isinstance."""

import torch
from _run import compile_run


class Act:
    pass


class Gelu(Act):
    approximate = "tanh"


class LeakyRelu(Act):
    slope = 0.1


REGISTRY = {"gelu": Gelu(), "leaky": LeakyRelu()}


class RegistryMLP(torch.nn.Module):
    def __init__(self, d=16, act="leaky"):
        super().__init__()
        self.lin = torch.nn.Linear(d, d)
        self.act_name = act

    def forward(self, x):
        act = REGISTRY[self.act_name]
        y = self.lin(x)
        if isinstance(act, Gelu):
            return torch.nn.functional.gelu(y, approximate=act.approximate)
        if isinstance(act, LeakyRelu):
            return torch.nn.functional.leaky_relu(y, act.slope)
        raise TypeError(f"unknown activation {act!r}")


if __name__ == "__main__":
    torch.manual_seed(0)
    compile_run(RegistryMLP(), torch.randn(4, 16))
