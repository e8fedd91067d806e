"""A forward() that keeps a debug trace of its inputs as text: str() of a tensor inside the compiled region."""

import torch

from ._harness import compile_and_run

TRACE: list[str] = []


def rotary(x: torch.Tensor, positions: torch.Tensor):
    TRACE.append(str(positions))  # expect: str-tensor
    freqs = positions[:, None].float() / 10000.0
    return x * torch.cos(freqs) + x.roll(1, dims=-1) * torch.sin(freqs)


def main(fullgraph: bool) -> None:
    compile_and_run(rotary, torch.randn(4, 8), torch.arange(4), fullgraph=fullgraph)
