"""Admission control: forward holds a threading.BoundedSemaphore slot while it runs (max concurrent batches)."""

import threading

import torch
from _run import compile_run


class Admitted(torch.nn.Module):
    def __init__(self, d=8, max_inflight=2):
        super().__init__()
        self.fc = torch.nn.Linear(d, d)
        self.slots = threading.BoundedSemaphore(max_inflight)

    def forward(self, x):
        with self.slots:
            return torch.relu(self.fc(x))


def main():
    torch.manual_seed(0)
    compile_run(Admitted(), torch.randn(3, 8))


if __name__ == "__main__":
    main()
