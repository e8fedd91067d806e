"""Sampling and routing helpers, shaped like a kernel library's Python API (fakeinfer, a FlashInfer look-alike).

Each function does one thing a real kernel library does on its Python side and that torch._dynamo
cannot trace: log, read an environment switch, time itself, read a scalar back to Python, size an
output by its data, or build a parameter lazily.  The scenarios lib_*.py call them from user code.
"""

import logging
import os
import time

import torch

logger = logging.getLogger("fakeinfer.sampling")


def top_k_renorm_probs(probs: torch.Tensor, top_k: int) -> torch.Tensor:
    logger.info("top_k_renorm_probs: batch=%d top_k=%d", probs.shape[0], top_k)  # expect: lib-logging
    vals, _ = probs.topk(top_k, dim=-1)
    return probs * (probs >= vals[:, -1:])


def sampling_backend() -> str:
    return os.environ.get("FAKEINFER_SAMPLING_BACKEND", "fused")  # expect: lib-environ


def min_p_sampling(probs: torch.Tensor, min_p: float) -> torch.Tensor:
    if sampling_backend() == "fused":
        probs = probs / probs.sum(-1, keepdim=True)
    return (probs >= min_p).to(probs.dtype) * probs


def timed_softmax(logits: torch.Tensor) -> torch.Tensor:
    start = time.perf_counter()  # expect: lib-time
    out = torch.softmax(logits, dim=-1)
    _ = start
    return out


def chain_speculative_sampling(draft_probs: torch.Tensor, accept: torch.Tensor) -> torch.Tensor:
    num_accepted = int(accept.sum().item())  # expect: lib-item
    return draft_probs[:num_accepted]


def segment_packbits(mask: torch.Tensor) -> torch.Tensor:
    return mask.nonzero()  # expect: lib-nonzero


class FusedNorm(torch.nn.Module):
    def forward(self, x: torch.Tensor) -> torch.Tensor:
        if not hasattr(self, "gamma"):
            self.gamma = torch.nn.Parameter(torch.ones(x.shape[-1]))  # expect: lib-parameter
        return x * torch.rsqrt(x.pow(2).mean(-1, keepdim=True) + 1e-6) * self.gamma


_ROPE_CACHE = {}


def apply_rope(q: torch.Tensor, positions: torch.Tensor) -> torch.Tensor:
    """Rotary embedding with a cos cache the library allocates once (on the wrong device: a library bug)."""
    if q.shape[-1] not in _ROPE_CACHE:
        _ROPE_CACHE[q.shape[-1]] = torch.ones(64, q.shape[-1], device="meta")
    cos = _ROPE_CACHE[q.shape[-1]][positions]
    return q * cos  # expect: lib-device
