"""Mean-pooling over the valid positions of each sequence, lengths taken from the mask with .tolist()."""

import torch
from _run import compile_run


class RaggedMean(torch.nn.Module):
    def forward(self, x, mask):
        lengths = mask.sum(1).tolist()
        rows = [x[i, :n].mean(0) for i, n in enumerate(lengths)]
        return torch.stack(rows)


if __name__ == "__main__":
    torch.manual_seed(0)
    mask = torch.tensor([[1, 1, 1, 0, 0], [1, 1, 1, 1, 1], [1, 0, 0, 0, 0]])
    compile_run(RaggedMean(), torch.randn(3, 5, 8), mask)
