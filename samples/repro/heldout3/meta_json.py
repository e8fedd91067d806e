"""A layer that records a json.dumps of its call metadata (shape, dtype, flags) on itself for a tracing hook."""

import json

import torch
from _run import compile_run


class TracedLinear(torch.nn.Module):
    def __init__(self, d=16):
        super().__init__()
        self.lin = torch.nn.Linear(d, d)
        self.last_meta = ""

    def forward(self, x):
        self.last_meta = json.dumps({"shape": list(x.shape), "dtype": str(x.dtype), "grad": x.requires_grad},
                                    sort_keys=True)
        return self.lin(x)


if __name__ == "__main__":
    torch.manual_seed(0)
    compile_run(TracedLinear(), torch.randn(4, 16))
