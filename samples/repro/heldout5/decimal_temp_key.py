"""Sampling temperature rounded with decimal.Decimal.quantize to key a per-temperature logits cache."""

from decimal import ROUND_HALF_EVEN, Decimal

import torch
from _run import compile_run


class CachedTempSoftmax(torch.nn.Module):
    def __init__(self, d=16, vocab=20):
        super().__init__()
        self.head = torch.nn.Linear(d, vocab)
        self.inv_temp: dict[str, float] = {}

    def forward(self, h, temperature: float):
        key = str(Decimal(repr(temperature)).quantize(Decimal("0.01"), rounding=ROUND_HALF_EVEN))
        if key not in self.inv_temp:
            self.inv_temp[key] = 1.0 / float(key)
        return torch.softmax(self.head(h) * self.inv_temp[key], dim=-1)


def main():
    torch.manual_seed(0)
    compile_run(CachedTempSoftmax(), torch.randn(3, 16), 0.7349)


if __name__ == "__main__":
    main()
