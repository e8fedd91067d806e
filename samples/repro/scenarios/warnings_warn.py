"""A deprecation warning raised from a rotary-embedding helper."""

import warnings

import torch

from ._harness import compile_and_run


def apply_rotary_emb(x: torch.Tensor, cos: torch.Tensor, sin: torch.Tensor, interleaved: bool = True) -> torch.Tensor:
    if interleaved:
        warnings.warn("interleaved rotary layout is deprecated and will be removed; pass is_neox_style=True", DeprecationWarning)  # expect: warnings
    x1, x2 = x.chunk(2, dim=-1)
    return torch.cat((x1 * cos - x2 * sin, x2 * cos + x1 * sin), dim=-1)


def main(fullgraph: bool) -> None:
    x = torch.randn(4, 16)
    compile_and_run(apply_rotary_emb, x, torch.randn(4, 8), torch.randn(4, 8), fullgraph=fullgraph)
