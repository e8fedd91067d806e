"""Toolchain discovery, shaped like flashinfer/jit/cpp_ext.py.

FlashInfer asks ``nvcc --version`` for the CUDA toolkit release.  There is no nvcc here,
so the interpreter's own ``--version`` output stands in for it: same subprocess call,
same regex-and-parse step, same functools.cache wrappers that Dynamo ignores.
"""

import functools
import os
import re
import subprocess
import sys
from typing import Tuple

_CUDA_HOME = os.environ.get("CUDA_HOME", os.environ.get("CUDA_PATH"))

Version = Tuple[int, int]


def _parse_version(text: str) -> Version:
    major, minor = text.split(".")[:2]
    return int(major), int(minor)


@functools.cache
def get_cuda_path() -> str:
    if _CUDA_HOME is not None:
        return _CUDA_HOME
    # the toolkit is wherever the compiler driver is; fall back to the usual prefix
    return "/usr/local/cuda"


@functools.cache
def get_cuda_version() -> Version:
    cuda_home = get_cuda_path()
    compiler = sys.executable  # stands in for os.path.join(cuda_home, "bin/nvcc")
    txt = subprocess.check_output([compiler, "--version"], text=True)  # expect: subprocess
    matches = re.findall(r"(\d+\.\d+)(?:\.\d+)?", txt)
    if not matches:
        raise RuntimeError(f"Could not parse the toolkit version under {cuda_home}: {txt!r}")
    return _parse_version(matches[0])


def is_cuda_version_at_least(version_str: str) -> bool:
    return get_cuda_version() >= _parse_version(version_str)  # frame: cuda-version-at-least


def get_cuda_arch_flags(arch: str) -> list:
    return [f"-gencode=arch=compute_{arch}a,code=sm_{arch}a"]
