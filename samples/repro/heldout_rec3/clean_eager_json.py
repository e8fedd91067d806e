"""Not a dynamo failure: the compiled scorer runs, then the eager reporting code json.dumps a dict holding a
tensor (TypeError: Object of type Tensor is not JSON serializable)."""

import json

import torch

from _h import run


def score(x: torch.Tensor) -> torch.Tensor:
    return torch.softmax(x, dim=-1).max(dim=-1).values


def main(fullgraph):
    s = run(score, torch.randn(3, 4), fullgraph=fullgraph)
    print(json.dumps({"scores": s}))  # expect: eager-json
