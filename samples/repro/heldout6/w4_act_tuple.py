"""Activations fake-quantized to int4 in forward: the (qweight, scales, zeros) tuple of w4kit.quantize_w4, dequantized back."""

import torch
from _run import compile_run

import w4kit


class ActInt4(torch.nn.Module):
    def __init__(self, d=64):
        super().__init__()
        self.fc = torch.nn.Linear(d, d)

    def forward(self, x):
        h = torch.relu(self.fc(x))
        packed = w4kit.quantize_w4(h, 32)
        h_hat = w4kit.dequantize_w4(*packed, 32)
        return h_hat, (h - h_hat).abs().amax(-1)


def main():
    torch.manual_seed(0)
    compile_run(ActInt4(), torch.randn(4, 64))


if __name__ == "__main__":
    main()
