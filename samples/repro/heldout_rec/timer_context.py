"""A generator-based context manager that times a block with time.perf_counter."""

import contextlib
import time

import torch

from _h import run

TIMES: dict = {}


@contextlib.contextmanager
def timed(name):
    t0 = time.perf_counter()  # expect: perf-counter
    yield
    TIMES[name] = TIMES.get(name, 0.0) + time.perf_counter() - t0


def mlp(x: torch.Tensor) -> torch.Tensor:
    with timed("mlp"):  # expect: timed-with
        return torch.nn.functional.gelu(x) * 1.5


def main(fullgraph):
    run(mlp, torch.randn(4, 8), fullgraph=fullgraph)
