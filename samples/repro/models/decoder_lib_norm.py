"""A decoder layer calling a library norm whose wrapper opens the library's tuning file (library culprit)."""

import torch
from _run import compile_run

import fakelib


class DecoderLayer(torch.nn.Module):
    def __init__(self, hidden=64):
        super().__init__()
        self.proj = torch.nn.Linear(hidden, hidden)
        self.norm_weight = torch.nn.Parameter(torch.ones(hidden))

    def forward(self, x, residual):
        h, residual = fakelib.fused_add_rms_norm(self.proj(x), residual, self.norm_weight)
        return torch.relu(h), residual


if __name__ == "__main__":
    torch.manual_seed(0)
    layer = DecoderLayer()
    compile_run(layer, torch.randn(4, 64), torch.randn(4, 64))
