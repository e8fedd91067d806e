"""A residual scale taken from a contextvars.ContextVar (a per-request setting) in forward."""

import contextvars

import torch
from _run import compile_run

RESIDUAL_SCALE = contextvars.ContextVar("residual_scale", default=0.5)


class ScaledResidual(torch.nn.Module):
    def __init__(self, d=16):
        super().__init__()
        self.fc = torch.nn.Linear(d, d)

    def forward(self, x):
        return x + RESIDUAL_SCALE.get() * self.fc(x)


if __name__ == "__main__":
    torch.manual_seed(0)
    compile_run(ScaledResidual(), torch.randn(4, 16))
