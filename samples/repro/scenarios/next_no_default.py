"""A layer that picks the first matching quantization config with next(), without a default.

This also fails without torch.compile: no config matches, so next() raises StopIteration."""

import torch

from ._harness import compile_and_run

QUANT_CONFIGS = [("fp8", 8), ("int4", 4)]


def quantized_linear(x: torch.Tensor, w: torch.Tensor) -> torch.Tensor:
    bits = next(b for name, b in QUANT_CONFIGS if name == "nvfp4")  # expect: next
    return (x @ w) * (bits / 8)


def main(fullgraph: bool) -> None:
    compile_and_run(quantized_linear, torch.randn(4, 16), torch.randn(16, 8), fullgraph=fullgraph)
