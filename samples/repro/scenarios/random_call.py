"""Speculative decoding: pick whether to accept a draft token with Python's random module."""

import random

import torch

from ._harness import compile_and_run


def accept_draft(draft_probs: torch.Tensor, target_probs: torch.Tensor) -> torch.Tensor:
    u = random.random()  # expect: random
    ratio = (target_probs / draft_probs.clamp(min=1e-6)).clamp(max=1.0)
    return ratio > u


def main(fullgraph: bool) -> None:
    compile_and_run(accept_draft, torch.rand(8), torch.rand(8), fullgraph=fullgraph)
