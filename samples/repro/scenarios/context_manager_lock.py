"""A KV-cache allocator that guards its free list with a threading lock."""

import threading

import torch

from ._harness import compile_and_run

_ALLOC_LOCK = threading.Lock()
_FREE_SLOTS = list(range(64))


def alloc_and_write(kv: torch.Tensor, new_kv: torch.Tensor) -> torch.Tensor:
    with _ALLOC_LOCK:  # expect: with-lock
        slot = _FREE_SLOTS[0]
    return kv.index_copy(0, torch.tensor([slot]), new_kv)


def main(fullgraph: bool) -> None:
    compile_and_run(alloc_and_write, torch.zeros(64, 8), torch.randn(1, 8), fullgraph=fullgraph)
