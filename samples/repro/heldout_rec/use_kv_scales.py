"""User code: a compiled attention step that quantises the KV buffer with kvpack.scales (the failure is in
the library, not in this file)."""

import torch
from kvpack import scales

from _h import run


def step(kv: torch.Tensor) -> torch.Tensor:
    return scales.quantize(kv) * 0.5  # expect: call-scales


def main(fullgraph):
    run(step, torch.randn(4, 16), fullgraph=fullgraph)
