"""Top-k candidate selection for a speculative draft done with numpy (np.argpartition) on the logits."""

import numpy as np
import torch
from _run import compile_run


class DraftTopK(torch.nn.Module):
    def __init__(self, d=16, vocab=32, k=4):
        super().__init__()
        self.head = torch.nn.Linear(d, vocab)
        self.k = k

    def forward(self, h):
        logits = self.head(h)
        idx = np.argpartition(-logits.detach().numpy(), self.k, axis=-1)[:, : self.k]
        top = torch.gather(logits, 1, torch.from_numpy(np.sort(idx, axis=-1)))
        return torch.softmax(top, dim=-1)


if __name__ == "__main__":
    torch.manual_seed(0)
    compile_run(DraftTopK(), torch.randn(3, 16))
