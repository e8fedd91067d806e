"""A LoRA-style adapter whose low-rank weights are loaded from a JSON file on the first forward call."""

import json
import os

import torch
from _run import compile_run

ADAPTER = os.path.join(os.path.dirname(os.path.abspath(__file__)), "adapter_json.json")


def load_delta(path: str) -> torch.Tensor:
    with open(path) as f:
        spec = json.load(f)
    return torch.tensor(spec["b"]) @ torch.tensor(spec["a"])


class AdaptedLinear(torch.nn.Module):
    def __init__(self, d=8):
        super().__init__()
        self.fc = torch.nn.Linear(d, d)
        self.delta = None

    def forward(self, x):
        if self.delta is None:
            self.delta = load_delta(ADAPTER)
        return self.fc(x) + x @ self.delta.t()


if __name__ == "__main__":
    torch.manual_seed(0)
    compile_run(AdaptedLinear(), torch.randn(4, 8))
