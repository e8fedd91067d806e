"""A layer that calls its activation with only the keyword arguments the activation accepts (inspect)."""

import inspect

import torch
from _run import compile_run


def act(x, alpha=0.1):
    return torch.nn.functional.leaky_relu(x, alpha)


class Dispatch(torch.nn.Module):
    def __init__(self, d=16):
        super().__init__()
        self.lin = torch.nn.Linear(d, d)
        self.opts = {"alpha": 0.2, "beta": 3}

    def forward(self, x):
        accepted = inspect.signature(act).parameters
        kwargs = {k: v for k, v in self.opts.items() if k in accepted}
        return act(self.lin(x), **kwargs)


if __name__ == "__main__":
    torch.manual_seed(0)
    compile_run(Dispatch(), torch.randn(4, 16))
