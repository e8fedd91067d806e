"""An embedding server that skips re-projecting inputs it has seen, keyed by hashlib.blake2b of the bytes."""

import hashlib

import torch
from _run import compile_run


class DedupProjector(torch.nn.Module):
    def __init__(self, d=16):
        super().__init__()
        self.proj = torch.nn.Linear(d, d)
        self.seen: dict[str, torch.Tensor] = {}

    def forward(self, x):
        key = hashlib.blake2b(x.detach().numpy().tobytes(), digest_size=8).hexdigest()
        out = self.seen.get(key)
        if out is None:
            out = self.proj(x)
            self.seen[key] = out.detach()
        return out


if __name__ == "__main__":
    torch.manual_seed(0)
    compile_run(DedupProjector(), torch.randn(4, 16))
