"""A layer that counts forward calls in a module-level global and keeps the step in a Python list log."""

import torch
from _run import compile_run

STEP = 0
HISTORY: list = []


class SteppedLayer(torch.nn.Module):
    def __init__(self, d=16):
        super().__init__()
        self.fc = torch.nn.Linear(d, d)

    def forward(self, x):
        global STEP
        STEP += 1
        HISTORY.append((STEP, tuple(x.shape)))
        return torch.tanh(self.fc(x))


if __name__ == "__main__":
    torch.manual_seed(0)
    compile_run(SteppedLayer(), torch.randn(4, 16))
