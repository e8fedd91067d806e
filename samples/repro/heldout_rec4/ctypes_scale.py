"""A quantiser rounds its configured scale to float32 precision with ctypes.c_float on every call."""

import ctypes

import torch

from _h import run

SCALE = 0.1


def quantise(x: torch.Tensor) -> torch.Tensor:
    scale = ctypes.c_float(SCALE).value  # expect: ctypes-float
    return torch.round(x / scale) * scale


def main(fullgraph):
    run(quantise, torch.randn(3, 4), fullgraph=fullgraph)
