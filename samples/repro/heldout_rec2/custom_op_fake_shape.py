"""A torch.library custom op (a fused row-scale kernel) whose fake implementation returns the wrong shape:
it drops the hidden dimension, so tracing the matmul that follows fails on fake tensors."""

import torch

from _h import run


@torch.library.custom_op("rec2::row_scale", mutates_args=())
def row_scale(x: torch.Tensor, s: torch.Tensor) -> torch.Tensor:
    return x * s[:, None]


@row_scale.register_fake
def _(x, s):
    return x.new_empty(x.shape[0])  # expect: fake-wrong-shape


W = torch.randn(8, 4)


def head(x: torch.Tensor, s: torch.Tensor) -> torch.Tensor:
    return row_scale(x, s) @ W  # expect: fake-consumer


def main(fullgraph):
    run(head, torch.randn(3, 8), torch.rand(3), fullgraph=fullgraph)
