"""User code: normalises with kvpack.dispatch.rms_norm, which filters kwargs with inspect.signature (the
failure, where there is one, is in the library)."""

import torch
from kvpack import dispatch

from _h import run


def norm(x: torch.Tensor) -> torch.Tensor:
    return dispatch.rms_norm(x, eps=1e-5, fused=True)  # expect: call-dispatch


def main(fullgraph):
    run(norm, torch.randn(3, 8), fullgraph=fullgraph)
