"""A kernel wrapped with @torch.library.custom_op, without register_fake."""

import torch

from ._harness import compile_and_run


@torch.library.custom_op("fakekern::rms_norm", mutates_args=())
def rms_norm_op(x: torch.Tensor, weight: torch.Tensor, eps: float) -> torch.Tensor:
    var = x.float().pow(2).mean(-1, keepdim=True)
    return (x * torch.rsqrt(var + eps)).to(x.dtype) * weight


def norm_forward(x: torch.Tensor, weight: torch.Tensor) -> torch.Tensor:
    return rms_norm_op(x, weight, 1e-6)  # expect: custom-op


def main(fullgraph: bool) -> None:
    compile_and_run(norm_forward, torch.randn(4, 16), torch.ones(16), fullgraph=fullgraph)
