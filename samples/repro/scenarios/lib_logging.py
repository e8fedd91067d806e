"""User code whose compiled forward() calls the kernel library's `top_k_renorm_probs`: the sampler applies top-k renormalisation.

The failure is inside the library (fakeinfer/sampling.py), not in this file."""

import torch

from fakeinfer import sampling

from ._harness import compile_and_run


def sample(logits: torch.Tensor) -> torch.Tensor:
    return sampling.top_k_renorm_probs(torch.softmax(logits, -1), 4)  # expect: lib-call-logging


def main(fullgraph: bool) -> None:
    compile_and_run(sample, torch.randn(4, 32), fullgraph=fullgraph)
