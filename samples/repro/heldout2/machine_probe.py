"""A kernel choice made from the host's machine type, probed with a subprocess (uname -m) under functools.cache."""

import functools
import subprocess

import torch
from _run import compile_run


@functools.cache
def machine() -> str:
    try:
        return subprocess.check_output(["uname", "-m"], text=True).strip()
    except (OSError, subprocess.CalledProcessError):
        return "unknown"


class ArchAwareNorm(torch.nn.Module):
    def __init__(self, d=16):
        super().__init__()
        self.norm = torch.nn.LayerNorm(d)

    def forward(self, x):
        eps = 1e-6 if machine() in ("x86_64", "aarch64") else 1e-5
        return self.norm(x) * (1.0 + eps)


if __name__ == "__main__":
    torch.manual_seed(0)
    compile_run(ArchAwareNorm(), torch.randn(4, 16))
