"""A fused-QKV split that pairs heads with scales using zip(strict=True), with one scale missing.

This also fails without torch.compile: the lengths differ, so zip raises ValueError."""

import torch

from ._harness import compile_and_run


def scale_heads(q: torch.Tensor, k: torch.Tensor, v: torch.Tensor) -> torch.Tensor:
    scales = [0.5, 0.25]
    out = [t * s for t, s in zip((q, k, v), scales, strict=True)]  # expect: zip-strict
    return torch.stack(out).sum(0)


def main(fullgraph: bool) -> None:
    compile_and_run(scale_heads, torch.randn(4, 8), torch.randn(4, 8), torch.randn(4, 8), fullgraph=fullgraph)
