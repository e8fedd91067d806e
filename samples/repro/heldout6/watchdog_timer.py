"""A hang watchdog: forward arms a threading.Timer and cancels it when the step finishes."""

import threading

import torch
from _run import compile_run


def _hung():
    print("watchdog: step took too long", flush=True)


class Watched(torch.nn.Module):
    def __init__(self, d=8, limit_s=60.0):
        super().__init__()
        self.fc = torch.nn.Linear(d, d)
        self.limit_s = limit_s

    def forward(self, x):
        timer = threading.Timer(self.limit_s, _hung)
        timer.start()
        try:
            return self.fc(x).tanh()
        finally:
            timer.cancel()


def main():
    torch.manual_seed(0)
    compile_run(Watched(), torch.randn(3, 8))


if __name__ == "__main__":
    main()
