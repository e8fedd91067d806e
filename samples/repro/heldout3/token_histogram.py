"""A repetition penalty computed from a collections.Counter of the token ids seen (tolist)."""

import collections

import torch
from _run import compile_run


class RepetitionPenalty(torch.nn.Module):
    def __init__(self, vocab=12, penalty=0.8):
        super().__init__()
        self.vocab = vocab
        self.penalty = penalty

    def forward(self, logits, tokens):
        counts = collections.Counter(tokens.tolist())
        factors = torch.ones(self.vocab)
        for tok, n in counts.most_common():
            factors[tok] = self.penalty ** n
        return logits * factors


if __name__ == "__main__":
    torch.manual_seed(0)
    compile_run(RepetitionPenalty(), torch.randn(3, 12), torch.tensor([1, 4, 4, 7, 1, 4]))
