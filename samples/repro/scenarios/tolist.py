"""Scheduler bookkeeping that converts a float tensor to a Python list inside forward()."""

import torch

from ._harness import compile_and_run


def update_logprobs(logprobs: torch.Tensor, history: list) -> torch.Tensor:
    history.extend(logprobs.max(dim=-1).values.tolist())  # expect: tolist
    return logprobs.exp()


def main(fullgraph: bool) -> None:
    compile_and_run(update_logprobs, torch.randn(4, 16).log_softmax(-1), [], fullgraph=fullgraph)
