"""User code whose compiled forward() calls the kernel library's `min_p_sampling`: the sampler applies min-p.

The failure is inside the library (fakeinfer/sampling.py), not in this file."""

import torch

from fakeinfer import sampling

from ._harness import compile_and_run


def sample(logits: torch.Tensor) -> torch.Tensor:
    return sampling.min_p_sampling(torch.softmax(logits, -1), 0.05)  # expect: lib-call-environ


def main(fullgraph: bool) -> None:
    compile_and_run(sample, torch.randn(4, 32), fullgraph=fullgraph)
