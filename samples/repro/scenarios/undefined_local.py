"""A forward() that reads a local only one branch assigns: with use_bias=False it is never bound."""

import torch

from ._harness import compile_and_run


def project(x: torch.Tensor, weight: torch.Tensor, use_bias: bool):
    out = x @ weight
    if use_bias:
        bias = out.mean(dim=0)
    return out + bias  # expect: undefined-local


def main(fullgraph: bool) -> None:
    compile_and_run(project, torch.randn(4, 16), torch.randn(16, 8), False, fullgraph=fullgraph)
