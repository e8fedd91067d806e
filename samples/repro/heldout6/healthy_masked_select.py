"""Mean of the non-padding hidden states, gathered with torch.masked_select (an output size that depends on the data)."""

import torch
from _run import compile_run


class ValidMean(torch.nn.Module):
    def __init__(self, d=8):
        super().__init__()
        self.proj = torch.nn.Linear(d, d)

    def forward(self, x, mask):
        h = self.proj(x)
        valid = torch.masked_select(h, mask.unsqueeze(-1)).view(-1, h.shape[-1])
        return valid.mean(0), h


def main():
    torch.manual_seed(0)
    mask = torch.tensor([[True, True, False], [True, False, False]])
    compile_run(ValidMean(), torch.randn(2, 3, 8), mask)


if __name__ == "__main__":
    main()
