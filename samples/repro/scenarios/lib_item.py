"""User code whose compiled forward() calls the kernel library's `chain_speculative_sampling`: speculative decoding accepts draft tokens.

The failure is inside the library (fakeinfer/sampling.py), not in this file."""

import torch

from fakeinfer import sampling

from ._harness import compile_and_run


def sample(logits: torch.Tensor) -> torch.Tensor:
    return sampling.chain_speculative_sampling(torch.softmax(logits, -1), logits[:, 0] > 0)  # expect: lib-call-item


def main(fullgraph: bool) -> None:
    compile_and_run(sample, torch.randn(4, 32), fullgraph=fullgraph)
