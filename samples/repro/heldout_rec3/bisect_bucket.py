"""Sequence lengths are padded up to the next bucket, looked up with bisect on the batch's length."""

import bisect

import torch

from _h import run

BUCKETS = [4, 8, 16, 32]


def pad_to_bucket(x: torch.Tensor) -> torch.Tensor:
    target = BUCKETS[bisect.bisect_left(BUCKETS, x.shape[1])]  # expect: bisect-bucket
    return torch.nn.functional.pad(x, (0, target - x.shape[1]))


def main(fullgraph):
    run(pad_to_bucket, torch.randn(2, 5), fullgraph=fullgraph)
