"""An attention block that times its attention in a telemetry span (time.perf_counter and a lock)."""

import torch
from _run import compile_run

import telemetry


class TimedAttention(torch.nn.Module):
    def __init__(self, d=32, heads=4):
        super().__init__()
        self.attn = torch.nn.MultiheadAttention(d, heads, batch_first=True)
        self.ln = torch.nn.LayerNorm(d)

    def forward(self, x):
        with telemetry.span("attention"):
            h, _ = self.attn(x, x, x, need_weights=False)
        return self.ln(x + h)


if __name__ == "__main__":
    torch.manual_seed(0)
    compile_run(TimedAttention().eval(), torch.randn(2, 5, 32))
