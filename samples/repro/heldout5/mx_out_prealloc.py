"""mxkern.mxfp4_quantize(x, out=(packed_buf, scale_buf)) into buffers allocated in forward."""

import torch
from _run import compile_run

import mxkern


class PackedCacheWrite(torch.nn.Module):
    def __init__(self, d=64):
        super().__init__()
        self.proj = torch.nn.Linear(d, d)

    def forward(self, x):
        h = torch.tanh(self.proj(x))
        packed = torch.empty(h.shape[0], h.shape[1] // 2, dtype=torch.uint8)
        scales = torch.empty(h.shape[0], h.shape[1] // 32, dtype=torch.uint8)
        mxkern.mxfp4_quantize(h, out=(packed, scales))
        return packed.float().sum(-1), scales


def main():
    torch.manual_seed(0)
    compile_run(PackedCacheWrite(), torch.randn(4, 64))


if __name__ == "__main__":
    main()
