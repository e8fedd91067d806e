"""Activation monitoring: a forward hook (registered in __init__) records out.abs().max().item() per layer."""

import torch
from _run import compile_run


class Monitored(torch.nn.Module):
    def __init__(self, d=24):
        super().__init__()
        self.l1 = torch.nn.Linear(d, d)
        self.l2 = torch.nn.Linear(d, d)
        self.absmax: dict[str, float] = {}
        for name in ("l1", "l2"):
            getattr(self, name).register_forward_hook(self._hook(name))

    def _hook(self, name):
        def hook(mod, inp, out):
            self.absmax[name] = max(self.absmax.get(name, 0.0), out.abs().max().item())
        return hook

    def forward(self, x):
        return self.l2(torch.relu(self.l1(x)))


def main():
    torch.manual_seed(0)
    compile_run(Monitored(), torch.randn(4, 24))


if __name__ == "__main__":
    main()
