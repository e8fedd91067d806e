"""A cache tag built with str.format from a dynamic batch size (a SymInt under dynamic=True)."""

import torch

from _h import run

TAGS = []


def tagged(x: torch.Tensor) -> torch.Tensor:
    TAGS.append("bs={}x{}".format(x.shape[0], x.shape[1]))  # expect: format-symint
    return x.relu()


def main(fullgraph):
    run(tagged, torch.randn(5, 3), fullgraph=fullgraph, dynamic=True)
