"""A decode step that zeroes finished rows, checking sampled ids against a set of stop tokens via tolist()."""

import torch
from _run import compile_run


class DecodeStep(torch.nn.Module):
    def __init__(self, d=16, vocab=20, stop_ids=(2, 7)):
        super().__init__()
        self.head = torch.nn.Linear(d, vocab)
        self.stop_ids = set(stop_ids)

    def forward(self, h):
        logits = self.head(h)
        next_ids = logits.argmax(-1)
        done = torch.tensor([t in self.stop_ids for t in next_ids.tolist()])
        return logits.masked_fill(done[:, None], 0.0)


if __name__ == "__main__":
    torch.manual_seed(0)
    compile_run(DecodeStep(), torch.randn(6, 16))
