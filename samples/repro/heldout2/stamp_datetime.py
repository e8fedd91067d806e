"""A cache layer that records when it last ran (datetime.now().isoformat() kept on the module)."""

import datetime

import torch
from _run import compile_run


class StampedCache(torch.nn.Module):
    def __init__(self, d=16):
        super().__init__()
        self.fc = torch.nn.Linear(d, d)
        self.last_run = None

    def forward(self, x):
        self.last_run = datetime.datetime.now().isoformat()
        return self.fc(x).softmax(-1)


if __name__ == "__main__":
    torch.manual_seed(0)
    compile_run(StampedCache(), torch.randn(4, 16))
