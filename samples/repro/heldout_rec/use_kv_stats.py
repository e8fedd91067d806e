"""User code: gathers pages with kvpack.stats.paged_gather, which counts calls per thread (the failure is in
the library)."""

import torch
from kvpack import stats

from _h import run


def gather(cache: torch.Tensor, idx: torch.Tensor) -> torch.Tensor:
    return stats.paged_gather(cache, idx).mean(0)  # expect: call-stats


def main(fullgraph):
    run(gather, torch.randn(10, 4), torch.tensor([1, 3, 5]), fullgraph=fullgraph)
