"""A response cache key made in forward from the logits' bytes: .numpy().tobytes()."""

import torch

from _h import run

SEEN = {}


def score(logits: torch.Tensor) -> torch.Tensor:
    key = logits.detach().numpy().tobytes()  # expect: numpy-bytes
    SEEN[key] = SEEN.get(key, 0) + 1
    return logits.softmax(-1)


def main(fullgraph):
    run(score, torch.randn(2, 5), fullgraph=fullgraph)
