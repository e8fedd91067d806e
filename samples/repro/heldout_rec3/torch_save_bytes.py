"""A debugging snapshot: forward serialises its activation with torch.save into an io.BytesIO."""

import io

import torch

from _h import run

SNAPSHOTS = []


def layer(x: torch.Tensor) -> torch.Tensor:
    h = torch.tanh(x)
    buf = io.BytesIO()  # expect: snapshot-buffer
    torch.save(h.detach(), buf)  # expect: torch-save
    SNAPSHOTS.append(buf.getvalue())  # expect: snapshot-bytes
    return h + 1


def main(fullgraph):
    run(layer, torch.randn(2, 3), fullgraph=fullgraph)
