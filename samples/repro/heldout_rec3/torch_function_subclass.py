"""A tensor subclass whose __torch_function__ counts every torch call into a module-level collections.Counter
(an op-usage profiler), passed through a compiled block."""

import collections

import torch

from _h import run

OP_COUNTS = collections.Counter()


class Traced(torch.Tensor):
    @classmethod
    def __torch_function__(cls, func, types, args=(), kwargs=None):
        OP_COUNTS.update([getattr(func, "__name__", str(func))])  # expect: subclass-counter
        return super().__torch_function__(func, types, args, kwargs or {})


def block(x: torch.Tensor) -> torch.Tensor:
    return torch.relu(x) + 1  # expect: subclass-op


def main(fullgraph):
    run(block, torch.randn(2, 3).as_subclass(Traced), fullgraph=fullgraph)
