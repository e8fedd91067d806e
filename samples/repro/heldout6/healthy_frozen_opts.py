"""A frozen dataclass of runtime options built inside forward from the module's settings."""

import dataclasses

import torch
from _run import compile_run


@dataclasses.dataclass(frozen=True)
class RunOpts:
    temperature: float
    top_k: int


class Sampler(torch.nn.Module):
    def __init__(self, d=8):
        super().__init__()
        self.head = torch.nn.Linear(d, 20)
        self.temperature, self.top_k = 0.7, 5

    def forward(self, h):
        opts = RunOpts(self.temperature, self.top_k)
        logits = self.head(h) / opts.temperature
        vals, idx = logits.topk(opts.top_k, dim=-1)
        return torch.softmax(vals, -1), idx.float()


def main():
    torch.manual_seed(0)
    compile_run(Sampler(), torch.randn(2, 8))


if __name__ == "__main__":
    main()
