"""An attention layer that reads a tuning switch from os.environ inside forward()."""

import os

import torch

from ._harness import compile_and_run


def attention(q: torch.Tensor, k: torch.Tensor) -> torch.Tensor:
    if os.environ["FAKESERVE_ATTN_SOFTCAP"] == "1":  # expect: environ-read
        q = torch.tanh(q)
    return torch.softmax(q @ k.T, dim=-1)


def main(fullgraph: bool) -> None:
    os.environ.setdefault("FAKESERVE_ATTN_SOFTCAP", "1")
    compile_and_run(attention, torch.randn(4, 8), torch.randn(6, 8), fullgraph=fullgraph)
