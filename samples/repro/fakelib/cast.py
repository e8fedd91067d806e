"""A cast kernel whose wrapper still warns about its deprecated name on every call."""

import warnings

import torch


def scaled_cast(x: torch.Tensor, scale: float, dtype: torch.dtype = torch.bfloat16) -> torch.Tensor:
    warnings.warn("fakelib.scaled_cast is deprecated; use fakelib.cast_scaled", DeprecationWarning)  # expect: fakelib-warn
    return (x * scale).to(dtype)
