"""An LRU of rotary tables keyed by sequence length: OrderedDict.move_to_end / popitem inside forward."""

from collections import OrderedDict

import torch

from _h import run

TABLES: OrderedDict = OrderedDict()


def rope_table(n: int) -> torch.Tensor:
    if n in TABLES:
        TABLES.move_to_end(n)  # expect: lru-move
        return TABLES[n]
    t = torch.arange(n).float()[:, None] * torch.ones(4)
    TABLES[n] = t
    if len(TABLES) > 2:
        TABLES.popitem(last=False)  # expect: lru-pop
    return t


def rotate(x: torch.Tensor) -> torch.Tensor:
    return x * rope_table(x.shape[0]).cos()


def main(fullgraph):
    TABLES[4] = torch.zeros(4, 4)
    run(rotate, torch.randn(4, 4), fullgraph=fullgraph)
