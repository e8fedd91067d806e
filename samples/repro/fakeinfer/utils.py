"""Small helpers, shaped like flashinfer/utils.py."""

import functools
import os
from typing import Tuple

import torch

# On a CPU-only machine we pretend to be an SM120 part (RTX PRO 6000 / DGX Spark class),
# which is the architecture on which SGLang 0.5.x reaches flashinfer.fp4_quantize directly.
_CPU_EMULATED_CAPABILITY = tuple(
    int(p) for p in os.environ.get("FAKEINFER_EMULATED_SM", "12.0").split(".")
)


def register_custom_op(name, fn=None, mutates_args=(), device_types=None):
    """Deliberately a no-op (FlashInfer made its own helper a no-op in v0.2.0.post2)."""
    if fn is None:
        return lambda f: f
    return fn


def register_fake_op(name, fn=None):
    if fn is None:
        return lambda f: f
    return fn


def round_up(x: int, y: int) -> int:
    return (x + y - 1) // y * y


def get_compute_capability(device: torch.device) -> Tuple[int, int]:
    if device.type == "cpu":
        return _CPU_EMULATED_CAPABILITY
    if device.type != "cuda":
        raise ValueError(f"device must be a cuda device, got {device}")
    return torch.cuda.get_device_capability(device.index)


@functools.cache
def device_support_pdl(device: torch.device) -> bool:
    if device.type != "cuda":
        return False
    major, _ = get_compute_capability(device)
    return major >= 9
