"""Per-request settings travel in a contextvars.ContextVar that forward reads (set by the request handler)."""

import contextvars

import torch

from _h import run

REQUEST_TEMPERATURE = contextvars.ContextVar("request_temperature", default=1.0)


def logits_to_probs(x: torch.Tensor) -> torch.Tensor:
    t = REQUEST_TEMPERATURE.get()  # expect: contextvar-get
    return torch.softmax(x / t, dim=-1)


def main(fullgraph):
    REQUEST_TEMPERATURE.set(0.8)
    run(logits_to_probs, torch.randn(2, 6), fullgraph=fullgraph)
