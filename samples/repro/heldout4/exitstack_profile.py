"""A block that opens optional per-stage contexts (a profiler range, no_grad) through contextlib.ExitStack."""

import contextlib

import torch
from _run import compile_run


class StagedBlock(torch.nn.Module):
    def __init__(self, d=16, profile=True):
        super().__init__()
        self.attn = torch.nn.Linear(d, d)
        self.mlp = torch.nn.Linear(d, d)
        self.profile = profile

    def forward(self, x):
        with contextlib.ExitStack() as stack:
            if self.profile:
                stack.enter_context(torch.profiler.record_function("staged_block"))
            stack.enter_context(torch.no_grad())
            h = x + self.attn(x)
            return h + torch.relu(self.mlp(h))


if __name__ == "__main__":
    torch.manual_seed(0)
    compile_run(StagedBlock(), torch.randn(4, 16))
