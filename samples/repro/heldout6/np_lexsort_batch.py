"""Scheduler-side ordering of requests by (length, priority) with np.lexsort on the host copies of both."""

import numpy as np
import torch
from _run import compile_run


class Ordered(torch.nn.Module):
    def __init__(self, d=8):
        super().__init__()
        self.fc = torch.nn.Linear(d, d)

    def forward(self, x, lengths, priority):
        order = np.lexsort((priority.numpy(), lengths.numpy()))
        return self.fc(x[torch.from_numpy(order)])


def main():
    torch.manual_seed(0)
    compile_run(Ordered(), torch.randn(4, 8), torch.tensor([3, 1, 3, 2]), torch.tensor([0, 1, 1, 0]))


if __name__ == "__main__":
    main()
