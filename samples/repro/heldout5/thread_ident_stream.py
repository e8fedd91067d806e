"""Per-thread decode state keyed by threading.get_ident() (one engine thread per stream)."""

import threading

import torch
from _run import compile_run


class StreamDecoder(torch.nn.Module):
    def __init__(self, d=16):
        super().__init__()
        self.cell = torch.nn.GRUCell(d, d)
        self.state: dict[int, torch.Tensor] = {}

    def forward(self, x):
        tid = threading.get_ident()
        h = self.state.get(tid, torch.zeros(x.shape[0], x.shape[1]))
        h = self.cell(x, h)
        self.state[tid] = h.detach()
        return h


def main():
    torch.manual_seed(0)
    compile_run(StreamDecoder(), torch.randn(2, 16))


if __name__ == "__main__":
    main()
