"""A forward that reads a request-metadata field by a misspelled name: fails in eager too (AttributeError)."""

import dataclasses

import torch
from _run import compile_run


@dataclasses.dataclass(frozen=True)
class RequestMeta:
    max_new_tokens: int
    temperature: float


class LengthPenalty(torch.nn.Module):
    def __init__(self, d=16, vocab=24):
        super().__init__()
        self.head = torch.nn.Linear(d, vocab)

    def forward(self, h, meta: RequestMeta):
        return torch.softmax(self.head(h) / meta.temperature, dim=-1) * (1.0 / meta.max_tokens)


if __name__ == "__main__":
    torch.manual_seed(0)
    compile_run(LengthPenalty(), torch.randn(3, 16), RequestMeta(max_new_tokens=32, temperature=0.8))
