"""A metrics line formatted with the locale's decimal point (locale.localeconv()) on every forward."""

import locale

import torch
from _run import compile_run


class Metered(torch.nn.Module):
    def __init__(self, d=8):
        super().__init__()
        self.fc = torch.nn.Linear(d, d)
        self.lines: list[str] = []

    def forward(self, x):
        point = locale.localeconv()["decimal_point"]
        self.lines.append(f"batch{point}size={x.shape[0]}")
        return self.fc(x).relu()


def main():
    torch.manual_seed(0)
    compile_run(Metered(), torch.randn(3, 8))


if __name__ == "__main__":
    main()
