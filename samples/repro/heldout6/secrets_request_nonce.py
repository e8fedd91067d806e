"""A per-request nonce from secrets.token_hex, recorded with the batch (tracing/audit ids), while the output stays seeded."""

import secrets

import torch
from _run import compile_run


class Traced(torch.nn.Module):
    def __init__(self, d=16):
        super().__init__()
        self.fc = torch.nn.Linear(d, d)
        self.seen: list[str] = []

    def forward(self, x):
        self.seen.append(secrets.token_hex(8))
        return torch.tanh(self.fc(x))


def main():
    torch.manual_seed(0)
    compile_run(Traced(), torch.randn(2, 16))


if __name__ == "__main__":
    main()
