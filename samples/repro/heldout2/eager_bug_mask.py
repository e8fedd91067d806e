"""An attention score layer whose padding mask has the wrong length (fails in eager too)."""

import torch
from _run import compile_run


class MaskedScores(torch.nn.Module):
    def forward(self, q, k, pad):
        scores = q @ k.transpose(-1, -2)
        return torch.softmax(scores.masked_fill(pad[:, None, :], float("-inf")), -1)


if __name__ == "__main__":
    torch.manual_seed(0)
    pad = torch.zeros(2, 6, dtype=torch.bool)
    compile_run(MaskedScores(), torch.randn(2, 5, 8), torch.randn(2, 5, 8), pad)
