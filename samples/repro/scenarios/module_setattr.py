"""A forward() that records the batch size on a config module it imports lazily (to dodge an import cycle)."""

import torch

from ._harness import compile_and_run


def embed(input_ids: torch.Tensor, table: torch.Tensor) -> torch.Tensor:
    import global_config

    global_config.last_batch_size = input_ids.shape[0]  # expect: module-setattr
    return table[input_ids]


def main(fullgraph: bool) -> None:
    compile_and_run(embed, torch.tensor([1, 5, 7]), torch.randn(16, 8), fullgraph=fullgraph)
