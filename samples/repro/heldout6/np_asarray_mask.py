"""A repetition penalty whose seen-token mask is built host-side with np.asarray(ids) and np.isin."""

import numpy as np
import torch
from _run import compile_run


class Penalty(torch.nn.Module):
    def __init__(self, vocab=12, d=8):
        super().__init__()
        self.head = torch.nn.Linear(d, vocab)

    def forward(self, h, prev_ids):
        logits = self.head(h)
        seen = np.isin(np.arange(logits.shape[-1]), np.asarray(prev_ids))
        return torch.where(torch.from_numpy(seen), logits / 1.3, logits)


def main():
    torch.manual_seed(0)
    compile_run(Penalty(), torch.randn(2, 8), torch.tensor([1, 5, 5, 9]))


if __name__ == "__main__":
    main()
