"""The activation is resolved by name in forward: importlib.import_module(module) + getattr (a plugin config)."""

import importlib

import torch
from _run import compile_run


class ConfigurableMLP(torch.nn.Module):
    def __init__(self, d=16, act="torch.nn.functional:mish"):
        super().__init__()
        self.up = torch.nn.Linear(d, 2 * d)
        self.down = torch.nn.Linear(2 * d, d)
        self.act_spec = act

    def forward(self, x):
        mod_name, fn_name = self.act_spec.split(":")
        act = getattr(importlib.import_module(mod_name), fn_name)
        return self.down(act(self.up(x)))


def main():
    torch.manual_seed(0)
    compile_run(ConfigurableMLP(), torch.randn(3, 16))


if __name__ == "__main__":
    main()
