"""Decode steps that stop early when a threading.Event (set by the API server on client disconnect) is set."""

import threading

import torch
from _run import compile_run


class Decoder(torch.nn.Module):
    def __init__(self, d=16, steps=4):
        super().__init__()
        self.cell = torch.nn.Linear(d, d)
        self.steps = steps
        self.cancelled = threading.Event()

    def forward(self, h):
        for _ in range(self.steps):
            if self.cancelled.is_set():
                break
            h = torch.tanh(self.cell(h))
        return h


def main():
    torch.manual_seed(0)
    compile_run(Decoder(), torch.randn(2, 16))


if __name__ == "__main__":
    main()
