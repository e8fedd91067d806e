"""The pooling mode is stored as a string in the config and turned into an Enum member by value in forward."""

import enum

import torch

from _h import run


class Pool(enum.Enum):
    MEAN = "mean"
    MAX = "max"


CFG = {"pool": "mean"}


def pool(x: torch.Tensor) -> torch.Tensor:
    mode = Pool(CFG["pool"])  # expect: enum-by-value
    return x.mean(dim=1) if mode is Pool.MEAN else x.amax(dim=1)


def main(fullgraph):
    run(pool, torch.randn(2, 5, 3), fullgraph=fullgraph)
