"""A legacy helper's DeprecationWarning silenced in forward with warnings.catch_warnings() + simplefilter."""

import warnings

import torch
from _run import compile_run


def legacy_norm(x):
    warnings.warn("legacy_norm is deprecated; use rms_norm", DeprecationWarning)
    return x / x.norm(dim=-1, keepdim=True).clamp_min(1e-6)


class Encoder(torch.nn.Module):
    def __init__(self, d=16):
        super().__init__()
        self.proj = torch.nn.Linear(d, d)

    def forward(self, x):
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", DeprecationWarning)
            h = legacy_norm(x)
        return self.proj(h)


def main():
    torch.manual_seed(0)
    compile_run(Encoder(), torch.randn(3, 16))


if __name__ == "__main__":
    main()
