"""fp16 wire format for a KV transfer: .numpy().astype(np.float16).view(np.uint16) and back."""

import numpy as np
import torch
from _run import compile_run


class KVTransfer(torch.nn.Module):
    def __init__(self, d=16):
        super().__init__()
        self.proj = torch.nn.Linear(d, d)

    def forward(self, x):
        kv = self.proj(x)
        wire = kv.detach().numpy().astype(np.float16).view(np.uint16)
        received = torch.from_numpy(wire.view(np.float16).astype(np.float32))
        return received, torch.from_numpy(wire.astype(np.int32))


def main():
    torch.manual_seed(0)
    with torch.no_grad():
        compile_run(KVTransfer(), torch.randn(3, 16))


if __name__ == "__main__":
    main()
