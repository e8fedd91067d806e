"""A norm wrapper that reads its eps from the wrapped function's default with inspect.signature."""

import inspect

import torch
from _run import compile_run


def rms(x, weight, eps=1e-5):
    return x * torch.rsqrt(x.pow(2).mean(-1, keepdim=True) + eps) * weight


class DefaultEpsNorm(torch.nn.Module):
    def __init__(self, d=16):
        super().__init__()
        self.weight = torch.nn.Parameter(torch.ones(d))

    def forward(self, x):
        eps = inspect.signature(rms).parameters["eps"].default
        return rms(x, self.weight, eps * 10)


if __name__ == "__main__":
    torch.manual_seed(0)
    compile_run(DefaultEpsNorm(), torch.randn(4, 16))
