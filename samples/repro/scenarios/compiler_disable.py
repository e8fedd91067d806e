"""A helper marked @torch.compiler.disable, called inside a fullgraph region."""

import torch

from ._harness import compile_and_run


@torch.compiler.disable
def quantize_activation(x: torch.Tensor, scale: torch.Tensor) -> torch.Tensor:
    return (x / scale).round().clamp(-448, 448)


def linear_fp8(x: torch.Tensor, w: torch.Tensor, scale: torch.Tensor) -> torch.Tensor:
    xq = quantize_activation(x, scale)  # expect: compiler-disable
    return (xq * scale) @ w


def main(fullgraph: bool) -> None:
    compile_and_run(linear_fp8, torch.randn(4, 16), torch.randn(16, 8), torch.tensor(0.05), fullgraph=fullgraph)
