"""Not a failure: a clean fullgraph compile under TORCH_LOGS=bytecode,graph (prints the original and the modified
bytecode and the captured graph)."""

import torch

from _h import run


def gate(x: torch.Tensor, y: torch.Tensor) -> torch.Tensor:
    return torch.sigmoid(x) * y + torch.where(x > 0, x, y)


def main(fullgraph):
    run(gate, torch.randn(2, 3), torch.randn(2, 3), fullgraph=fullgraph)
