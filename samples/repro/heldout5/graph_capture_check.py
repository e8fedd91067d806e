"""Skip a host-side sanity check while a CUDA graph is being captured (torch.cuda.is_current_stream_capturing())."""

import torch
from _run import compile_run


class CheckedNorm(torch.nn.Module):
    def __init__(self, d=16):
        super().__init__()
        self.norm = torch.nn.LayerNorm(d)

    def forward(self, x):
        if torch.cuda.is_available() and not torch.cuda.is_current_stream_capturing():
            torch.cuda.synchronize()
        return self.norm(x) * 2.0


def main():
    torch.manual_seed(0)
    compile_run(CheckedNorm(), torch.randn(3, 16))


if __name__ == "__main__":
    main()
