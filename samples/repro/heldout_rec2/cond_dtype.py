"""Early exit with torch.cond: the skip branch hands back the fp16 residual while the full branch returns
float32, so the two branches disagree on dtype."""

import torch

from _h import run


def skip(x):
    return x.to(torch.float16)


def full(x):
    return torch.tanh(x)


def layer(x: torch.Tensor) -> torch.Tensor:
    return torch.cond(x.sum() > 0, full, skip, (x,))  # expect: cond-dtype


def main(fullgraph):
    run(layer, torch.randn(4, 3), fullgraph=fullgraph)
