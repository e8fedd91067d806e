"""Fake-quant of activations between two layers, through a small helper that calls quantix.fp8_quantize."""

import torch
from _run import compile_run

import quantix


def qdq_fp8(x: torch.Tensor) -> torch.Tensor:
    """Quantize to FP8 and back, to see the accuracy of an FP8 activation path."""
    q, scale = quantix.fp8_quantize(x)
    return q.to(x.dtype) * scale.unsqueeze(-1)


class QDQBlock(torch.nn.Module):
    def __init__(self, d=24):
        super().__init__()
        self.fc1 = torch.nn.Linear(d, d)
        self.fc2 = torch.nn.Linear(d, d)

    def forward(self, x):
        h = torch.nn.functional.silu(self.fc1(x))
        return self.fc2(qdq_fp8(h))


if __name__ == "__main__":
    torch.manual_seed(0)
    compile_run(QDQBlock(), torch.randn(6, 24))
