"""Adds derived entries to a dict while iterating over it (fails in eager too)."""

import torch

from _h import run


def features(x: torch.Tensor):
    feats = {"x": x, "x2": x * x}
    for name in feats:  # expect: dict-iter
        feats[name + "_abs"] = feats[name].abs()
    return feats["x_abs"] + feats["x2_abs"]


def main(fullgraph):
    run(features, torch.randn(3, 3), fullgraph=fullgraph)
