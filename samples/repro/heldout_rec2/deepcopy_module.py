"""An EMA shadow made in forward: copy.deepcopy of a submodule on the first call."""

import copy

import torch

from _h import run


class Smoothed(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.proj = torch.nn.Linear(4, 4)
        self.shadow = None

    def forward(self, x):
        if self.shadow is None:
            self.shadow = copy.deepcopy(self.proj)  # expect: deepcopy-module
        return self.proj(x) + self.shadow(x)


def main(fullgraph):
    run(Smoothed(), torch.randn(2, 4), fullgraph=fullgraph)
