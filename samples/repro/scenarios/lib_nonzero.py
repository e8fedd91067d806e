"""User code whose compiled forward() calls the kernel library's `segment_packbits`: the mask is packed.

The failure is inside the library (fakeinfer/sampling.py), not in this file."""

import torch

from fakeinfer import sampling

from ._harness import compile_and_run


def sample(logits: torch.Tensor) -> torch.Tensor:
    return sampling.segment_packbits(logits > 0)  # expect: lib-call-nonzero


def main(fullgraph: bool) -> None:
    compile_and_run(sample, torch.randn(4, 32), fullgraph=fullgraph)
