"""A sampler derives the per-call config with dataclasses.replace from a frozen default."""

import dataclasses

import torch

from _h import run


@dataclasses.dataclass(frozen=True)
class SamplingConfig:
    temperature: float = 1.0
    top_k: int = 4


DEFAULT = SamplingConfig()


def sample_logits(x: torch.Tensor) -> torch.Tensor:
    cfg = dataclasses.replace(DEFAULT, temperature=0.7)  # expect: dc-replace
    return torch.topk(x / cfg.temperature, cfg.top_k, dim=-1).values


def main(fullgraph):
    run(sample_logits, torch.randn(2, 8), fullgraph=fullgraph)
