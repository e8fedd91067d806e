"""A request tracer that serialises metadata with json.dumps from forward()."""

import json

import torch

from ._harness import compile_and_run

TRACE = []


def traced_forward(x: torch.Tensor, w: torch.Tensor) -> torch.Tensor:
    TRACE.append(json.dumps({"op": "linear", "rows": x.shape[0], "cols": w.shape[1]}))  # expect: json
    return x @ w


def main(fullgraph: bool) -> None:
    compile_and_run(traced_forward, torch.randn(4, 16), torch.randn(16, 8), fullgraph=fullgraph)
