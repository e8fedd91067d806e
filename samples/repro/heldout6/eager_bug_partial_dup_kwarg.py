"""A scaling helper bound with functools.partial(scale=...) and then also given the scale positionally: TypeError in eager too."""

import functools

import torch
from _run import compile_run


def scaled_silu(x, scale):
    return torch.nn.functional.silu(x) * scale


class Act(torch.nn.Module):
    def __init__(self, d=8):
        super().__init__()
        self.fc = torch.nn.Linear(d, d)
        self.act = functools.partial(scaled_silu, scale=0.5)

    def forward(self, x):
        return self.act(self.fc(x), 0.5)


def main():
    torch.manual_seed(0)
    compile_run(Act(), torch.randn(3, 8))


if __name__ == "__main__":
    main()
