"""User code compiled with the serving stack's own backend (fakeserve's SplittingBackend), which raises.

The failure is inside the backend (fakeserve/compilation/backend.py), not in this file or in dynamo."""

import torch

from fakeserve.compilation.backend import SplittingBackend

from ._harness import compile_and_run


def mlp(x: torch.Tensor, w1: torch.Tensor, w2: torch.Tensor) -> torch.Tensor:
    return torch.relu(x @ w1) @ w2  # expect: lib-call-backend


def main(fullgraph: bool) -> None:
    compile_and_run(mlp, torch.randn(4, 16), torch.randn(16, 32), torch.randn(32, 16), fullgraph=fullgraph,
                    backend=SplittingBackend())
