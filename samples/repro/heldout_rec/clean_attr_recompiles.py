"""A run that goes on: a module attribute read as a Python int changes every call, so dynamo recompiles
until its limit and then runs the frame eagerly (TORCH_LOGS=recompiles)."""

import torch
import torch._dynamo

from _h import show


class Decoder(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.pos = 0

    def forward(self, x):
        self.pos += 1
        return x * self.pos  # expect: attr-recompile


def main(fullgraph):
    limit = "recompile_limit" if hasattr(torch._dynamo.config, "recompile_limit") else "cache_size_limit"
    setattr(torch._dynamo.config, limit, 3)
    m = torch.compile(Decoder(), backend="eager", fullgraph=fullgraph)
    for _ in range(6):
        out = m(torch.ones(2))
    print(f"decode finished: {show(out)}", flush=True)
