"""A decoder that keeps recent step outputs in a Python list and trims it by sys.getsizeof (a byte budget)."""

import sys

import torch
from _run import compile_run


class HistoryDecoder(torch.nn.Module):
    def __init__(self, d=16, budget_bytes=4096):
        super().__init__()
        self.step = torch.nn.Linear(d, d)
        self.history: list[torch.Tensor] = []
        self.budget_bytes = budget_bytes

    def forward(self, x):
        y = torch.tanh(self.step(x))
        self.history.append(y.detach())
        if sys.getsizeof(self.history) > self.budget_bytes:
            del self.history[: len(self.history) // 2]
        return y


if __name__ == "__main__":
    torch.manual_seed(0)
    compile_run(HistoryDecoder(), torch.randn(4, 16))
