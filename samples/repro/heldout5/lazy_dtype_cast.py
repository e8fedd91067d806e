"""The first call casts the module to the input's dtype (self.to(x.dtype)) when they differ."""

import torch
from _run import compile_run


class AutoCastProj(torch.nn.Module):
    def __init__(self, d=16):
        super().__init__()
        self.proj = torch.nn.Linear(d, d)

    def forward(self, x):
        if self.proj.weight.dtype != x.dtype:
            self.to(x.dtype)
        return torch.nn.functional.silu(self.proj(x))


def main():
    torch.manual_seed(0)
    compile_run(AutoCastProj(), torch.randn(3, 16, dtype=torch.float64))


if __name__ == "__main__":
    main()
