"""A communicator that flips an environment variable on its first all-reduce."""

import os

import torch

from ._harness import compile_and_run


def custom_all_reduce(x: torch.Tensor) -> torch.Tensor:
    os.environ["NCCL_ALGO"] = "Ring"  # expect: environ
    return x * 2


def main(fullgraph: bool) -> None:
    compile_and_run(custom_all_reduce, torch.randn(4, 8), fullgraph=fullgraph)
