"""A request header packed in forward through a functools.partial of struct.pack."""

import functools
import struct

import torch

from _h import run

PACK = functools.partial(struct.pack, "<iI")
HEADERS = []


def embed(ids: torch.Tensor, table: torch.Tensor) -> torch.Tensor:
    HEADERS.append(PACK(ids.shape[0], 7))  # expect: partial-pack
    return table[ids]


def main(fullgraph):
    run(embed, torch.tensor([1, 2, 0]), torch.randn(4, 3), fullgraph=fullgraph)
