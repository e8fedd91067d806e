"""A scale that depends on which host runs the model (hostname checksum), read in forward."""

import socket
import zlib

import torch
from _run import compile_run


def host_bucket(buckets: int) -> int:
    return zlib.crc32(socket.gethostname().encode()) % buckets


class HostScaled(torch.nn.Module):
    def forward(self, x):
        return x * (1.0 + 0.0 * host_bucket(7))


if __name__ == "__main__":
    torch.manual_seed(0)
    compile_run(HostScaled(), torch.randn(4, 16))
