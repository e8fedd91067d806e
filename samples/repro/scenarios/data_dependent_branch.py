"""A logits processor that branches on tensor contents."""

import torch

from ._harness import compile_and_run


def apply_repetition_penalty(logits: torch.Tensor, penalties: torch.Tensor) -> torch.Tensor:
    if (penalties != 1.0).sum() > 0:  # expect: branch
        logits = torch.where(logits > 0, logits / penalties[:, None], logits * penalties[:, None])
    return logits


def main(fullgraph: bool) -> None:
    compile_and_run(apply_repetition_penalty, torch.randn(4, 32), torch.full((4,), 1.2), fullgraph=fullgraph)
