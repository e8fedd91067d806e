"""A quantisation wrapper decides per call whether its layer name matches a glob pattern with fnmatch."""

import fnmatch

import torch

from _h import run

NAME = "model.layers.3.attn.qkv"
QUANTISED = "*.attn.*"


def linear(x: torch.Tensor, w: torch.Tensor) -> torch.Tensor:
    if fnmatch.fnmatch(NAME, QUANTISED):  # expect: fnmatch-name
        w = torch.round(w * 16) / 16
    return x @ w


def main(fullgraph):
    run(linear, torch.randn(2, 4), torch.randn(4, 4), fullgraph=fullgraph)
