"""A layer that tags its output with a zlib.crc32 checksum of its name on every call."""

import zlib

import torch

from _h import run


class Tagged(torch.nn.Module):
    def __init__(self, name):
        super().__init__()
        self.name = name

    def forward(self, x):
        salt = zlib.crc32(self.name.encode()) % 97  # expect: crc32
        return x + salt


def main(fullgraph):
    run(Tagged("layers.3.mlp"), torch.randn(2, 4), fullgraph=fullgraph)
