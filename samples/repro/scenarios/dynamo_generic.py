"""A forward() that defines a dataclass for its outputs on the fly."""

import dataclasses

import torch

from ._harness import compile_and_run


def logits_forward(hidden: torch.Tensor, lm_head: torch.Tensor):
    @dataclasses.dataclass
    class LogitsOutput:  # expect: build-class
        next_token_logits: torch.Tensor

    return LogitsOutput(hidden @ lm_head).next_token_logits


def main(fullgraph: bool) -> None:
    compile_and_run(logits_forward, torch.randn(4, 16), torch.randn(16, 32), fullgraph=fullgraph)
