"""A noisy helper's output is silenced with contextlib.redirect_stdout inside forward."""

import contextlib
import io

import torch

from _h import run


def noisy_norm(x: torch.Tensor) -> torch.Tensor:
    return x / (x.norm() + 1e-6)


def layer(x: torch.Tensor) -> torch.Tensor:
    with contextlib.redirect_stdout(io.StringIO()):  # expect: redirect-stdout
        y = noisy_norm(x)
    return y * 3


def main(fullgraph):
    run(layer, torch.randn(2, 3), fullgraph=fullgraph)
