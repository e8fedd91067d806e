"""Inductor on a machine whose C++ compiler is missing (a slim container image): the compile fails in
inductor's code generation, under AOTAutograd and compile_fx, before any kernel runs."""

import torch
import torch._inductor.config

from ._harness import compile_and_run


def layer(x: torch.Tensor) -> torch.Tensor:
    return torch.sin(x) + 1


def main(fullgraph: bool) -> None:
    torch._inductor.config.cpp.cxx = ("/nonexistent/c++",)  # what an image without g++ leaves inductor
    compile_and_run(layer, torch.randn(8), fullgraph=fullgraph, backend="inductor")
