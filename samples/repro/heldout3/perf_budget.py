"""An early-exit stack that stops adding layers when a time.perf_counter budget runs out."""

import time

import torch
from _run import compile_run


class BudgetStack(torch.nn.Module):
    def __init__(self, d=16, n=3, budget_s=30.0):
        super().__init__()
        self.layers = torch.nn.ModuleList(torch.nn.Linear(d, d) for _ in range(n))
        self.budget_s = budget_s

    def forward(self, x):
        t0 = time.perf_counter()
        for layer in self.layers:
            x = torch.tanh(layer(x))
            if time.perf_counter() - t0 > self.budget_s:
                break
        return x


if __name__ == "__main__":
    torch.manual_seed(0)
    compile_run(BudgetStack(), torch.randn(4, 16))
