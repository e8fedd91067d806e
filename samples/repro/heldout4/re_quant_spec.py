"""Parses the layer's quantization spec string ("w8a8-g16") with re.fullmatch in forward, then fake-quantizes."""

import re

import torch
from _run import compile_run

SPEC = re.compile(r"w(\d+)a(\d+)(?:-g(\d+))?")


class SpecQuant(torch.nn.Module):
    def __init__(self, d=32, spec="w8a8-g16"):
        super().__init__()
        self.proj = torch.nn.Linear(d, d)
        self.spec = spec

    def forward(self, x):
        m = SPEC.fullmatch(self.spec)
        a_bits, group = int(m.group(2)), int(m.group(3) or x.shape[-1])
        qmax = 2 ** (a_bits - 1) - 1
        g = x.reshape(x.shape[0], -1, group)
        scale = g.abs().amax(-1, keepdim=True).clamp(min=1e-8) / qmax
        return self.proj((torch.round(g / scale) * scale).reshape_as(x))


if __name__ == "__main__":
    torch.manual_seed(0)
    compile_run(SpecQuant(), torch.randn(4, 32))
