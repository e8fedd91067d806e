"""Temperature / top-p sampling probabilities from a frozen SamplingParams dataclass (compiles as is)."""

import dataclasses

import torch
from _run import compile_run


@dataclasses.dataclass(frozen=True)
class SamplingParams:
    temperature: float = 0.7
    top_p: float = 0.9


class Sampler(torch.nn.Module):
    def __init__(self, d=16, vocab=30, params=SamplingParams()):
        super().__init__()
        self.head = torch.nn.Linear(d, vocab)
        self.params = params

    def forward(self, h):
        probs = torch.softmax(self.head(h) / self.params.temperature, dim=-1)
        sorted_p, order = probs.sort(dim=-1, descending=True)
        keep = sorted_p.cumsum(-1) - sorted_p < self.params.top_p
        filtered = torch.zeros_like(probs).scatter(-1, order, sorted_p * keep)
        return filtered / filtered.sum(-1, keepdim=True)


if __name__ == "__main__":
    torch.manual_seed(0)
    compile_run(Sampler(), torch.randn(3, 16))
