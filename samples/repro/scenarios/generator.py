"""A layer that pulls its next LoRA adapter id from a generator built at start-up."""

import itertools

import torch

from ._harness import compile_and_run


def _adapter_ids():
    for i in itertools.count():
        yield i % 4


ADAPTER_IDS = _adapter_ids()


def lora_forward(x: torch.Tensor, lora_a: torch.Tensor, lora_b: torch.Tensor) -> torch.Tensor:
    adapter = next(ADAPTER_IDS)  # expect: generator
    return x + (x @ lora_a[adapter]) @ lora_b[adapter]


def main(fullgraph: bool) -> None:
    compile_and_run(lora_forward, torch.randn(4, 16), torch.randn(4, 16, 4), torch.randn(4, 4, 16), fullgraph=fullgraph)
