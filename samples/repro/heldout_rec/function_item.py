"""A custom torch.autograd.Function whose forward reads the absmax back to Python."""

import torch

from _h import run


class AbsMaxScale(torch.autograd.Function):
    @staticmethod
    def forward(ctx, x):
        amax = x.abs().max().item()  # expect: function-item
        ctx.amax = amax
        return x / amax

    @staticmethod
    def backward(ctx, g):
        return g / ctx.amax


def fwd(x: torch.Tensor) -> torch.Tensor:
    return AbsMaxScale.apply(x) + 1  # expect: function-apply


def main(fullgraph):
    run(fwd, torch.randn(4, 4, requires_grad=True), fullgraph=fullgraph)
