"""Tensor-parallel shard selection: forward asks torch.distributed for the rank, checking only
is_available() (not is_initialized()), in a single-process run where no process group was created."""

import torch
import torch.distributed as dist

from _h import run


def shard(x: torch.Tensor) -> torch.Tensor:
    rank = dist.get_rank() if dist.is_available() else 0  # expect: dist-rank
    return x.chunk(2, dim=-1)[rank] * 2


def main(fullgraph):
    run(shard, torch.randn(2, 8), fullgraph=fullgraph)
