"""A metrics row rendered with csv.writer into an io.StringIO buffer in forward (for a CSV metrics sink)."""

import csv
import io

import torch
from _run import compile_run


class Metered(torch.nn.Module):
    def __init__(self, d=8):
        super().__init__()
        self.fc = torch.nn.Linear(d, d)
        self.rows: list[str] = []

    def forward(self, x):
        buf = io.StringIO()
        csv.writer(buf).writerow(["forward", x.shape[0], x.shape[1]])
        self.rows.append(buf.getvalue())
        return self.fc(x).tanh()


def main():
    torch.manual_seed(0)
    compile_run(Metered(), torch.randn(3, 8))


if __name__ == "__main__":
    main()
