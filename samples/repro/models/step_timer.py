"""A sampler that stamps the time of its last call on itself (attribute store of a traced time call)."""

import time

import torch
from _run import compile_run


class Sampler(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.last_call = 0.0

    def forward(self, logits, temperature):
        self.last_call = time.perf_counter()
        return torch.softmax(logits / temperature, dim=-1).argmax(-1)


if __name__ == "__main__":
    torch.manual_seed(0)
    compile_run(Sampler(), torch.randn(4, 16), torch.tensor(0.7))
