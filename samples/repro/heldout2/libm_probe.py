"""A feature probe with ctypes.util.find_library, in forward, choosing between two equal formulas."""

import ctypes.util

import torch
from _run import compile_run


def have_libm() -> bool:
    return ctypes.util.find_library("m") is not None


class SoftplusLayer(torch.nn.Module):
    def forward(self, x):
        if have_libm():
            return torch.nn.functional.softplus(x)
        return torch.log1p(torch.exp(x))


if __name__ == "__main__":
    torch.manual_seed(0)
    compile_run(SoftplusLayer(), torch.randn(4, 16))
