"""An MLP whose activation is tinyops's fused gelu+int8 quantization (the FlashInfer-like JIT chain)."""

import torch
from _run import compile_run

import tinyops


class QuantMLP(torch.nn.Module):
    def __init__(self, d=32):
        super().__init__()
        self.up = torch.nn.Linear(d, 2 * d)
        self.down = torch.nn.Linear(2 * d, d)

    def forward(self, x):
        q, s = tinyops.fused_gelu_quant(self.up(x), 0.05)
        return self.down(q.to(torch.float32) * s)


if __name__ == "__main__":
    torch.manual_seed(0)
    compile_run(QuantMLP(), torch.randn(4, 32))
