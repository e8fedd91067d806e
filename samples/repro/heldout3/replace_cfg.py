"""A block that makes a per-call config with dataclasses.replace + asdict, from a frozen default config."""

import dataclasses

import torch
from _run import compile_run


@dataclasses.dataclass(frozen=True)
class Cfg:
    dropout: float = 0.0
    residual_scale: float = 1.0
    tags: tuple = ("base",)


class ScaledResidual(torch.nn.Module):
    def __init__(self, d=16):
        super().__init__()
        self.lin = torch.nn.Linear(d, d)
        self.cfg = Cfg()

    def forward(self, x):
        cfg = dataclasses.replace(self.cfg, residual_scale=1.0 / x.shape[-1] ** 0.5)
        params = dataclasses.asdict(cfg)
        return x + self.lin(x) * params["residual_scale"]


if __name__ == "__main__":
    torch.manual_seed(0)
    compile_run(ScaledResidual(), torch.randn(4, 16))
