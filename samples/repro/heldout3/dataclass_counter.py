"""A block whose dataclass config is mutated in forward: it counts calls and switches to a warm scale."""

import dataclasses

import torch
from _run import compile_run


@dataclasses.dataclass
class BlockConfig:
    warmup_calls: int = 2
    calls: int = 0
    scale: float = 0.5


class WarmBlock(torch.nn.Module):
    def __init__(self, d=16):
        super().__init__()
        self.cfg = BlockConfig()
        self.lin = torch.nn.Linear(d, d)

    def forward(self, x):
        self.cfg.calls += 1
        if self.cfg.calls > self.cfg.warmup_calls:
            self.cfg.scale = 1.0
        return self.lin(x) * self.cfg.scale


if __name__ == "__main__":
    torch.manual_seed(0)
    compile_run(WarmBlock(), torch.randn(4, 16))
