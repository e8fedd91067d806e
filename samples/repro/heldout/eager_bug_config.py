"""A head that looks up a config key that is not there: it fails in eager too (a bug in the model)."""

import torch
from _run import compile_run


class Head(torch.nn.Module):
    def __init__(self, d=16):
        super().__init__()
        self.lin = torch.nn.Linear(d, 4)
        self.config = {"temperature": 0.7}

    def forward(self, x):
        return self.lin(x) / self.config["temprature"]


if __name__ == "__main__":
    torch.manual_seed(0)
    compile_run(Head(), torch.randn(4, 16))
