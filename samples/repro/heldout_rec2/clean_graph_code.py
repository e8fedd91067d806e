"""Not a failure: a clean fullgraph compile of a small attention block under TORCH_LOGS=graph_code, which
prints the captured FX graph's code."""

import torch

from _h import run


def attn(q: torch.Tensor, k: torch.Tensor, v: torch.Tensor) -> torch.Tensor:
    w = (q @ k.transpose(-1, -2) / 2.0).softmax(-1)
    return w @ v


def main(fullgraph):
    run(attn, torch.randn(2, 3, 4), torch.randn(2, 3, 4), torch.randn(2, 3, 4), fullgraph=fullgraph)
