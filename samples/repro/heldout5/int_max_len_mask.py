"""Padding mask sized by max_len = int(lengths.max()) (a host sync to size torch.arange)."""

import torch
from _run import compile_run


class MaskedPool(torch.nn.Module):
    def __init__(self, d=8):
        super().__init__()
        self.proj = torch.nn.Linear(d, d)

    def forward(self, x, lengths):
        max_len = int(lengths.max())
        mask = torch.arange(max_len)[None, :] < lengths[:, None]
        h = self.proj(x[:, :max_len])
        return (h * mask[..., None]).sum(1) / lengths[:, None]


def main():
    torch.manual_seed(0)
    compile_run(MaskedPool(), torch.randn(3, 6, 8), torch.tensor([2, 5, 3]))


if __name__ == "__main__":
    main()
