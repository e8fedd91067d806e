"""A layer with a latency budget: it times itself with time.monotonic and warns when over budget."""

import time
import warnings

import torch
from _run import compile_run


class BudgetedLayer(torch.nn.Module):
    def __init__(self, d=16, budget_s=5.0):
        super().__init__()
        self.fc = torch.nn.Linear(d, d)
        self.budget_s = budget_s

    def forward(self, x):
        start = time.monotonic()
        y = torch.nn.functional.gelu(self.fc(x))
        if time.monotonic() - start > self.budget_s:
            warnings.warn("BudgetedLayer went over its latency budget")
        return y


if __name__ == "__main__":
    torch.manual_seed(0)
    compile_run(BudgetedLayer(), torch.randn(4, 16))
