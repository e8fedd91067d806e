"""A CPU kernel splits its batch into torch.get_num_threads() chunks."""

import torch

from _h import run


def chunked_matmul(x: torch.Tensor, w: torch.Tensor) -> torch.Tensor:
    n = torch.get_num_threads()  # expect: num-threads
    return torch.cat([c @ w for c in x.chunk(n)], dim=0)


def main(fullgraph):
    run(chunked_matmul, torch.randn(4, 3), torch.randn(3, 3), fullgraph=fullgraph)
