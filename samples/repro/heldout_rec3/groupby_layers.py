"""Consecutive layers of the same kind are fused: the layer kinds are grouped with itertools.groupby in forward."""

import itertools

import torch

from _h import run


class Stack(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.kinds = ["attn", "attn", "mlp", "attn"]

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        for kind, group in itertools.groupby(self.kinds):  # expect: groupby-kinds
            n = len(list(group))
            x = torch.tanh(x) * n if kind == "attn" else torch.relu(x) + n
        return x


def main(fullgraph):
    run(Stack(), torch.randn(2, 3), fullgraph=fullgraph)
