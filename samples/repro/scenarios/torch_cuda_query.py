"""A kernel dispatcher that asks for the GPU's compute capability inside forward()."""

import torch

from ._harness import compile_and_run


def use_fp8_kernel() -> bool:
    major, minor = torch.cuda.get_device_capability()  # expect: torch-cuda
    return major * 10 + minor >= 89


def gemm(x: torch.Tensor, w: torch.Tensor) -> torch.Tensor:
    if use_fp8_kernel():
        return (x.to(torch.float8_e4m3fn).float()) @ w
    return x @ w


def main(fullgraph: bool) -> None:
    compile_and_run(gemm, torch.randn(4, 16), torch.randn(16, 8), fullgraph=fullgraph)
