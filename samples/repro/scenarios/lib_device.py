"""User code calling the kernel library's `apply_rope`, whose cos cache the library built on another device.

The failure is inside the library (fakeinfer/sampling.py), and it happens without torch.compile too."""

import torch

from fakeinfer import sampling

from ._harness import compile_and_run


def attention_prologue(q: torch.Tensor, positions: torch.Tensor) -> torch.Tensor:
    return sampling.apply_rope(q, positions)  # expect: lib-call-device


def main(fullgraph: bool) -> None:
    compile_and_run(attention_prologue, torch.randn(4, 8), torch.tensor([0, 1, 2, 3]), fullgraph=fullgraph)
