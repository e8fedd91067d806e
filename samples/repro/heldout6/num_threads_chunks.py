"""Row chunks sized by torch.get_num_threads() (intra-op threads) read in forward."""

import torch
from _run import compile_run


class Chunked(torch.nn.Module):
    def __init__(self, d=8):
        super().__init__()
        self.fc = torch.nn.Linear(d, d)

    def forward(self, x):
        n = max(1, min(x.shape[0], torch.get_num_threads()))
        return torch.cat([self.fc(c).relu() for c in x.chunk(n)])


def main():
    torch.manual_seed(0)
    compile_run(Chunked(), torch.randn(6, 8))


if __name__ == "__main__":
    main()
