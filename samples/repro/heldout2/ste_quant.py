"""Fake quantisation with a straight-through estimator: a custom autograd.Function whose forward takes the scale
as a Python float (.item()) and keeps it on ctx."""

import torch
from _run import compile_run


class FakeQuant(torch.autograd.Function):
    @staticmethod
    def forward(ctx, x):
        scale = x.abs().max().item() / 127.0
        ctx.scale = scale
        return torch.round(x / scale).clamp(-127, 127) * scale

    @staticmethod
    def backward(ctx, grad):
        return grad


class QATLinear(torch.nn.Module):
    def __init__(self, d=16):
        super().__init__()
        self.fc = torch.nn.Linear(d, d)

    def forward(self, x):
        return self.fc(FakeQuant.apply(x))


if __name__ == "__main__":
    torch.manual_seed(0)
    compile_run(QATLinear(), torch.randn(4, 16))
