"""A kernel-config lookup that raises KeyError for an untuned shape, inside forward()."""

import torch

from ._harness import compile_and_run

TUNED_BLOCK_SIZES = {64: 32, 128: 64, 4096: 128}


def get_block_size(hidden_size: int) -> int:
    return TUNED_BLOCK_SIZES[hidden_size]  # expect: observed-exception


def rms_norm(x: torch.Tensor, weight: torch.Tensor) -> torch.Tensor:
    block = get_block_size(x.shape[-1])
    var = x.pow(2).mean(-1, keepdim=True)
    return x * torch.rsqrt(var + 1e-6) * weight * (block // block)


def main(fullgraph: bool) -> None:
    compile_and_run(rms_norm, torch.randn(4, 96), torch.ones(96), fullgraph=fullgraph)
