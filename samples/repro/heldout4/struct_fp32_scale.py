"""A static activation scale from a config float, rounded to fp32 with struct as the kernel would store it."""

import struct

import torch
from _run import compile_run


class StaticScaleQuant(torch.nn.Module):
    def __init__(self, d=16, act_scale=0.0123456789):
        super().__init__()
        self.proj = torch.nn.Linear(d, d)
        self.act_scale = act_scale

    def forward(self, x):
        (scale32,) = struct.unpack("<f", struct.pack("<f", self.act_scale))
        q = torch.clamp(torch.round(self.proj(x) / scale32), -128, 127)
        return q * scale32


if __name__ == "__main__":
    torch.manual_seed(0)
    compile_run(StaticScaleQuant(), torch.randn(4, 16))
