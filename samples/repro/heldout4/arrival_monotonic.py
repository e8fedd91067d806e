"""Builds per-step request metadata (a dataclass whose arrival time is a time.monotonic_ns default) in forward."""

import dataclasses
import time

import torch
from _run import compile_run


@dataclasses.dataclass
class StepMeta:
    batch: int
    arrival_ns: int = dataclasses.field(default_factory=time.monotonic_ns)


class ScheduledLayer(torch.nn.Module):
    def __init__(self, d=16):
        super().__init__()
        self.proj = torch.nn.Linear(d, d)
        self.last_meta: StepMeta | None = None

    def forward(self, x):
        self.last_meta = StepMeta(batch=x.shape[0])
        return torch.nn.functional.silu(self.proj(x))


if __name__ == "__main__":
    torch.manual_seed(0)
    compile_run(ScheduledLayer(), torch.randn(4, 16))
