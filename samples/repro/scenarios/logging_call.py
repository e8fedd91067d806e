"""A sampler that logs which path it took, from inside forward()."""

import logging

import torch

from ._harness import compile_and_run

logger = logging.getLogger("fakeserve.layers.sampler")


class Sampler(torch.nn.Module):
    def __init__(self, use_fused: bool = False):
        super().__init__()
        self.use_fused = use_fused

    def forward(self, logits: torch.Tensor, temperature: torch.Tensor) -> torch.Tensor:
        if not self.use_fused:
            logger.warning("Fused top-k/top-p sampling kernel unavailable, using the torch fallback for %d rows", logits.shape[0])  # expect: logging
        probs = torch.softmax(logits / temperature[:, None], dim=-1)
        return probs.argmax(dim=-1)


def main(fullgraph: bool) -> None:
    logging.basicConfig(format="[%(asctime)s] %(message)s", datefmt="%Y-%m-%d %H:%M:%S")
    compile_and_run(Sampler(), torch.randn(4, 32), torch.full((4,), 0.7), fullgraph=fullgraph)
