"""Not a dynamo failure: the compiled projection runs; afterwards eager code views its transposed output
without .contiguous() (RuntimeError: view size is not compatible with input tensor's size and stride)."""

import torch

from _h import run


def proj(x: torch.Tensor) -> torch.Tensor:
    return x * 2 + 1


def main(fullgraph):
    y = run(proj, torch.randn(2, 3, 4), fullgraph=fullgraph)
    print(y.transpose(1, 2).view(2, 12))  # expect: eager-view
