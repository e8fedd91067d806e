"""A layer that tags each call with a fresh request id (uuid4) for tracing."""

import uuid

import torch
from _run import compile_run


class Traced(torch.nn.Module):
    def __init__(self, d=16):
        super().__init__()
        self.lin = torch.nn.Linear(d, d)
        self.request_id = None

    def forward(self, x):
        self.request_id = uuid.uuid4().hex
        return self.lin(x).sigmoid()


if __name__ == "__main__":
    torch.manual_seed(0)
    compile_run(Traced(), torch.randn(4, 16))
