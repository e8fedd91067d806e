"""Not a dynamo failure: the compiled model runs, then the eager response code packs the output's sum into an
unsigned struct field ("I") and struct.error is raised for a negative value."""

import struct

import torch

from _h import run


def head(x: torch.Tensor) -> torch.Tensor:
    return (x - 10).sum(-1)


def main(fullgraph):
    out = run(head, torch.rand(2, 4), fullgraph=fullgraph)
    print(struct.pack("<I", int(out[0])))  # expect: eager-struct
