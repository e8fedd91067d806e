"""The quantisation scale is kept as a decimal string and rounded with decimal.Decimal in forward."""

from decimal import Decimal

import torch

from _h import run


class Quant(torch.nn.Module):
    def __init__(self, scale: str):
        super().__init__()
        self.scale = scale

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        s = float(Decimal(self.scale).quantize(Decimal("0.001")))  # expect: decimal-scale
        return torch.round(x / s) * s


def main(fullgraph):
    run(Quant("0.0123456"), torch.randn(2, 3), fullgraph=fullgraph)
