"""Host-side worker count from len(os.sched_getaffinity(0)) (the CPUs this process may use) splits the batch."""

import os

import torch
from _run import compile_run


class Split(torch.nn.Module):
    def __init__(self, d=8):
        super().__init__()
        self.fc = torch.nn.Linear(d, d)

    def forward(self, x):
        workers = min(len(os.sched_getaffinity(0)), x.shape[0])
        return torch.cat([self.fc(c) for c in x.tensor_split(max(workers, 1))]).relu()


def main():
    torch.manual_seed(0)
    compile_run(Split(), torch.randn(4, 8))


if __name__ == "__main__":
    main()
