"""Norm kernels: each call reads the library's tuning table first (a file open, a json parse)."""

import logging

import torch

from .tuning import tuned_block_size

logger = logging.getLogger("fakelib.norm")


def rms_norm(x: torch.Tensor, weight: torch.Tensor, eps: float = 1e-6) -> torch.Tensor:
    block = tuned_block_size("rms_norm", x.shape[-1])
    logger.debug("rms_norm block=%d", block)
    var = x.float().pow(2).mean(-1, keepdim=True)
    return (x.float() * torch.rsqrt(var + eps)).to(x.dtype) * weight


def fused_add_rms_norm(x: torch.Tensor, residual: torch.Tensor, weight: torch.Tensor, eps: float = 1e-6):
    residual = x + residual
    return rms_norm(residual, weight, eps), residual
