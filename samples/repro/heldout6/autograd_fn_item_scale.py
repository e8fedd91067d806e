"""Dynamic loss-scale style autograd.Function whose forward reads the amax as a Python float (.item())."""

import torch
from _run import compile_run


class AmaxScale(torch.autograd.Function):
    @staticmethod
    def forward(ctx, x):
        amax = x.abs().max().item()
        ctx.scale = 127.0 / max(amax, 1e-6)
        return torch.round(x * ctx.scale) / ctx.scale

    @staticmethod
    def backward(ctx, g):
        return g


class Net(torch.nn.Module):
    def __init__(self, d=8):
        super().__init__()
        self.fc = torch.nn.Linear(d, d)

    def forward(self, x):
        return AmaxScale.apply(self.fc(x))


def main():
    torch.manual_seed(0)
    compile_run(Net(), torch.randn(3, 8))


if __name__ == "__main__":
    main()
