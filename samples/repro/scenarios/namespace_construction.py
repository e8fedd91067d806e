"""A sampling helper that bundles its kernels in a SimpleNamespace on every call."""

from types import SimpleNamespace

import torch

from ._harness import compile_and_run


def _top_k_mask(logits, k):
    return logits.masked_fill(logits < logits.topk(k, dim=-1).values[..., -1:], float("-inf"))


def get_sampling_module():
    return SimpleNamespace(top_k_mask=_top_k_mask, softmax=torch.softmax)  # expect: namespace


def top_k_sampling(logits: torch.Tensor) -> torch.Tensor:
    mod = get_sampling_module()
    return mod.softmax(mod.top_k_mask(logits, 5), dim=-1).argmax(-1)


def main(fullgraph: bool) -> None:
    compile_and_run(top_k_sampling, torch.randn(4, 32), fullgraph=fullgraph)
