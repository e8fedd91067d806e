"""Rotary embedding whose theta comes from a config file read through a helper (constant arguments)."""

import json
import os

import torch
from _run import compile_run

CONFIG = os.path.join(os.path.dirname(os.path.abspath(__file__)), "rope_config.json")


def rope_theta(head_dim: int) -> float:
    with open(CONFIG) as f:
        return float(json.load(f)["theta"]) * head_dim / 64


class Rotary(torch.nn.Module):
    def forward(self, q):
        theta = rope_theta(q.shape[-1])
        inv = 1.0 / (theta ** (torch.arange(0, q.shape[-1], 2, dtype=torch.float32) / q.shape[-1]))
        ang = torch.arange(q.shape[0], dtype=torch.float32)[:, None] * inv[None, :]
        q1, q2 = q[..., ::2], q[..., 1::2]
        return torch.cat([q1 * ang.cos() - q2 * ang.sin(), q1 * ang.sin() + q2 * ang.cos()], dim=-1)


if __name__ == "__main__":
    torch.manual_seed(0)
    compile_run(Rotary(), torch.randn(8, 64))
