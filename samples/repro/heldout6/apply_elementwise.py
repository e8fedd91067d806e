"""A user 'kernel' written in Python: Tensor.apply_ with a per-element callable (a piecewise activation)."""

import torch
from _run import compile_run


def piecewise(v: float) -> float:
    return v if v > 0 else 0.1 * v


class Act(torch.nn.Module):
    def __init__(self, d=8):
        super().__init__()
        self.fc = torch.nn.Linear(d, d)

    def forward(self, x):
        h = self.fc(x).detach().clone()
        return h.apply_(piecewise)


def main():
    torch.manual_seed(0)
    compile_run(Act(), torch.randn(3, 8))


if __name__ == "__main__":
    main()
