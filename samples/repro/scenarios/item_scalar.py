"""A paged-KV gather that turns a tensor max into a Python loop bound."""

import torch

from ._harness import compile_and_run


def gather_kv(kv_cache: torch.Tensor, seq_lens: torch.Tensor) -> torch.Tensor:
    max_len = int(seq_lens.max().item())  # expect: item-call
    rows = [kv_cache[i] for i in range(max_len)]  # expect: item
    return torch.stack(rows).sum(0)


def main(fullgraph: bool) -> None:
    compile_and_run(gather_kv, torch.randn(16, 8), torch.tensor([3, 7, 5]), fullgraph=fullgraph)
