"""A residual block that logs a warning when its output has NaNs (a branch on a tensor around a log call)."""

import logging

import torch
from _run import compile_run

logger = logging.getLogger("nan_warning")


class CheckedBlock(torch.nn.Module):
    def __init__(self, d=16):
        super().__init__()
        self.fc = torch.nn.Linear(d, d)

    def forward(self, x):
        y = x + torch.relu(self.fc(x))
        if torch.isnan(y).any():
            logger.warning("NaN in CheckedBlock output")
        return y


if __name__ == "__main__":
    torch.manual_seed(0)
    compile_run(CheckedBlock(), torch.randn(4, 16))
