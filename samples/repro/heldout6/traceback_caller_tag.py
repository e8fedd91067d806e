"""A debug tag naming the calling file and line, from traceback.extract_stack, kept per call."""

import traceback

import torch
from _run import compile_run


class Tagged(torch.nn.Module):
    def __init__(self, d=8):
        super().__init__()
        self.fc = torch.nn.Linear(d, d)
        self.calls: list[str] = []

    def forward(self, x):
        frame = traceback.extract_stack(limit=2)[0]
        self.calls.append(f"{frame.name}:{frame.lineno}")
        return self.fc(x).sigmoid()


def main():
    torch.manual_seed(0)
    compile_run(Tagged(), torch.randn(2, 8))


if __name__ == "__main__":
    main()
