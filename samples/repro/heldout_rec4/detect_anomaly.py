"""A debugging build wraps forward's body in torch.autograd.detect_anomaly()."""

import torch

from _h import run


def loss_fn(x: torch.Tensor) -> torch.Tensor:
    with torch.autograd.detect_anomaly():  # expect: detect-anomaly
        return torch.log1p(x.exp()).mean()


def main(fullgraph):
    run(loss_fn, torch.randn(3, 3), fullgraph=fullgraph)
