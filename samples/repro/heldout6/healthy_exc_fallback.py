"""A fast path that raises NotImplementedError for odd widths; the fallback logs sys.exc_info()'s type name."""

import sys

import torch
from _run import compile_run


def fast_gelu(x):
    if x.shape[-1] % 16:
        raise NotImplementedError("fast_gelu needs a width multiple of 16")
    return x * torch.sigmoid(1.702 * x)


class Act(torch.nn.Module):
    def __init__(self, d=12):
        super().__init__()
        self.fc = torch.nn.Linear(d, d)
        self.fallbacks: list[str] = []

    def forward(self, x):
        h = self.fc(x)
        try:
            return fast_gelu(h)
        except NotImplementedError:
            self.fallbacks.append(sys.exc_info()[0].__name__)
            return torch.nn.functional.gelu(h)


def main():
    torch.manual_seed(0)
    compile_run(Act(), torch.randn(3, 12))


if __name__ == "__main__":
    main()
