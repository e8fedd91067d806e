"""A prefix cache that hashes token ids with a C-extension function (zlib.crc32 stands in for a pybind kernel)."""

import zlib

import torch

from ._harness import compile_and_run


def prefix_hash(token_ids: bytes) -> int:
    return zlib.crc32(token_ids)  # expect: c-extension


def lookup_prefix(hidden: torch.Tensor, token_ids: bytes) -> torch.Tensor:
    h = prefix_hash(token_ids)
    return hidden * (h % 7)


def main(fullgraph: bool) -> None:
    compile_and_run(lookup_prefix, torch.randn(4, 8), b"\x01\x02\x03\x04", fullgraph=fullgraph)
