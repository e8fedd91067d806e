"""A module parses its head layout ("8x64") from a config string with a regex on every forward."""

import re

import torch

from _h import run


class Heads(torch.nn.Module):
    def __init__(self, spec: str):
        super().__init__()
        self.spec = spec

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        m = re.fullmatch(r"(\d+)x(\d+)", self.spec)  # expect: regex-spec
        heads, dim = int(m.group(1)), int(m.group(2))
        return x.view(x.shape[0], heads, dim).sum(-1)


def main(fullgraph):
    run(Heads("2x3"), torch.randn(4, 6), fullgraph=fullgraph)
