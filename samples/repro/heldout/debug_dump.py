"""A block that serializes its input into an in-memory buffer for a debugging hook on every call."""

import io

import torch
from _run import compile_run


class Dumped(torch.nn.Module):
    def __init__(self, d=16):
        super().__init__()
        self.lin = torch.nn.Linear(d, d)
        self.last_dump = b""

    def forward(self, x):
        buf = io.BytesIO()
        torch.save(x.detach(), buf)
        self.last_dump = buf.getvalue()
        return torch.relu(self.lin(x))


if __name__ == "__main__":
    torch.manual_seed(0)
    compile_run(Dumped(), torch.randn(4, 16))
