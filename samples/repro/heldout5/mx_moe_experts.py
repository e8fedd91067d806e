"""A top-1 MoE whose expert weights are MXFP4 buffers, each expert applied with mxkern.mx_linear (dense dispatch)."""

import torch
from _run import compile_run

import mxkern


class MXMoE(torch.nn.Module):
    def __init__(self, d=32, n_experts=3):
        super().__init__()
        self.router = torch.nn.Linear(d, n_experts, bias=False)
        self.n_experts = n_experts
        for i in range(n_experts):
            w = torch.randn(d, d) / d ** 0.5
            packed, scales = mxkern.mxfp4_quantize(w)
            self.register_buffer(f"w{i}_packed", packed)
            self.register_buffer(f"w{i}_scales", scales)

    def forward(self, x):
        gate = torch.softmax(self.router(x), dim=-1)
        top = gate.argmax(dim=-1)
        out = torch.zeros_like(x)
        for i in range(self.n_experts):
            y = mxkern.mx_linear(x, getattr(self, f"w{i}_packed"), getattr(self, f"w{i}_scales"))
            out = out + torch.where((top == i)[:, None], y * gate[:, i:i + 1], torch.zeros_like(y))
        return out


def main():
    torch.manual_seed(0)
    compile_run(MXMoE(), torch.randn(7, 32))


if __name__ == "__main__":
    main()
