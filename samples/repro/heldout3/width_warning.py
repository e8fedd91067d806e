"""A projection that warns (warnings.warn with a formatted message) when the input width is not a multiple of 8."""

import warnings

import torch
from _run import compile_run


class PaddedProj(torch.nn.Module):
    def __init__(self, d=12):
        super().__init__()
        self.lin = torch.nn.Linear(d, d)

    def forward(self, x):
        if x.shape[-1] % 8:
            warnings.warn(f"width {x.shape[-1]} is not a multiple of 8; padding costs "
                          f"{(8 - x.shape[-1] % 8) / x.shape[-1]:.1%} extra", RuntimeWarning, stacklevel=2)
        return self.lin(x)


if __name__ == "__main__":
    torch.manual_seed(0)
    compile_run(PaddedProj(), torch.randn(4, 12))
