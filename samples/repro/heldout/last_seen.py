"""A layer that records when it last ran as an ISO timestamp."""

import datetime

import torch
from _run import compile_run


class Stamped(torch.nn.Module):
    def __init__(self, d=16):
        super().__init__()
        self.lin = torch.nn.Linear(d, d)
        self.last_seen = ""

    def forward(self, x):
        self.last_seen = datetime.datetime.now().isoformat()
        return self.lin(x).tanh()


if __name__ == "__main__":
    torch.manual_seed(0)
    compile_run(Stamped(), torch.randn(4, 16))
