"""A stack of layers that reports its progress on stderr through telemetry.progress (sys.stderr.write)."""

import torch
from _run import compile_run

import telemetry


class Stack(torch.nn.Module):
    def __init__(self, d=16, n=3):
        super().__init__()
        self.layers = torch.nn.ModuleList(torch.nn.Linear(d, d) for _ in range(n))

    def forward(self, x):
        for i, layer in enumerate(self.layers):
            x = torch.tanh(layer(x))
            telemetry.progress(i, len(self.layers))
        return x


if __name__ == "__main__":
    torch.manual_seed(0)
    compile_run(Stack(), torch.randn(4, 16))
