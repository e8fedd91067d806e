"""A forward pass that times itself for a metrics collector."""

import time

import torch

from ._harness import compile_and_run

FORWARD_TIMES = []


def mlp_forward(x: torch.Tensor, w1: torch.Tensor, w2: torch.Tensor) -> torch.Tensor:
    tic = time.time()  # expect: time
    out = torch.nn.functional.silu(x @ w1) @ w2
    FORWARD_TIMES.append(tic)
    return out


def main(fullgraph: bool) -> None:
    compile_and_run(mlp_forward, torch.randn(4, 16), torch.randn(16, 32), torch.randn(32, 16), fullgraph=fullgraph)
