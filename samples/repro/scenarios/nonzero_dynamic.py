"""A sampler that gathers the positions of finished sequences with Tensor.nonzero()."""

import torch

from ._harness import compile_and_run


def finished_rows(logits: torch.Tensor, eos_mask: torch.Tensor) -> torch.Tensor:
    idx = eos_mask.nonzero().squeeze(-1)  # expect: nonzero
    return logits.index_select(0, idx).sum(0)


def main(fullgraph: bool) -> None:
    compile_and_run(finished_rows, torch.randn(6, 8), torch.tensor([True, False, True, False, False, True]),
                    fullgraph=fullgraph)
