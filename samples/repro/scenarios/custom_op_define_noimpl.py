"""A kernel library that registers its op with torch.library.define + impl, but no fake/meta kernel."""

import torch

from ._harness import compile_and_run

torch.library.define("fakekern::silu_and_mul", "(Tensor x) -> Tensor")


@torch.library.impl("fakekern::silu_and_mul", "CPU")
def _silu_and_mul_cpu(x: torch.Tensor) -> torch.Tensor:
    d = x.shape[-1] // 2
    return torch.nn.functional.silu(x[..., :d]) * x[..., d:]


def mlp(x: torch.Tensor, w_gate_up: torch.Tensor) -> torch.Tensor:
    return torch.ops.fakekern.silu_and_mul(x @ w_gate_up)  # expect: custom-op


def main(fullgraph: bool) -> None:
    compile_and_run(mlp, torch.randn(4, 16), torch.randn(16, 64), fullgraph=fullgraph)
