"""An MoE router that counts tokens per expert with torch.bincount inside forward()."""

import torch

from ._harness import compile_and_run


def expert_histogram(topk_ids: torch.Tensor, weights: torch.Tensor) -> torch.Tensor:
    counts = torch.bincount(topk_ids.flatten())  # expect: bincount
    return weights[: counts.shape[0]] * counts


def main(fullgraph: bool) -> None:
    compile_and_run(expert_histogram, torch.tensor([[0, 3], [1, 3], [2, 0]]), torch.ones(8), fullgraph=fullgraph)
