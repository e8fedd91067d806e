"""Wraps activations in a __torch_function__ tensor subclass that counts the ops it sees (op-level tracing)."""

import collections

import torch
from _run import compile_run

OP_COUNTS: collections.Counter = collections.Counter()


class CountingTensor(torch.Tensor):
    @classmethod
    def __torch_function__(cls, func, types, args=(), kwargs=None):
        OP_COUNTS[getattr(func, "__name__", str(func))] += 1
        return super().__torch_function__(func, types, args, kwargs or {})


class Traced(torch.nn.Module):
    def __init__(self, d=16):
        super().__init__()
        self.fc = torch.nn.Linear(d, d)

    def forward(self, x):
        h = x.as_subclass(CountingTensor)
        return torch.tanh(self.fc(h)).as_subclass(torch.Tensor)


if __name__ == "__main__":
    torch.manual_seed(0)
    compile_run(Traced(), torch.randn(4, 16))
