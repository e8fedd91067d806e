"""A bag-of-words layer that embeds only the distinct token ids of the batch (torch.unique, data-dependent)."""

import torch
from _run import compile_run


class UniqueBag(torch.nn.Module):
    def __init__(self, vocab=20, d=8):
        super().__init__()
        self.emb = torch.nn.Embedding(vocab, d)

    def forward(self, ids):
        uniq = torch.unique(ids)
        return self.emb(uniq).sum(0)


if __name__ == "__main__":
    torch.manual_seed(0)
    compile_run(UniqueBag(), torch.tensor([[1, 3, 3, 5], [5, 7, 1, 9]]))
