"""A decoder step that formats a tensor value into a debug string inside the compiled region."""

import torch

from _h import run


def step(x: torch.Tensor, trace: list) -> torch.Tensor:
    probs = x.softmax(-1)
    trace.append(f"peak prob {probs.max():.3f}")  # expect: fstring
    return probs.log()


def main(fullgraph):
    run(step, torch.randn(2, 8), [], fullgraph=fullgraph)
