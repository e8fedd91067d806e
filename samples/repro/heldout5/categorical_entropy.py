"""Sampling metadata from torch.distributions.Categorical(logits=...): entropy and log-prob of the argmax token."""

import torch
from _run import compile_run


class SamplerStats(torch.nn.Module):
    def __init__(self, d=16, vocab=20):
        super().__init__()
        self.head = torch.nn.Linear(d, vocab)

    def forward(self, h):
        dist = torch.distributions.Categorical(logits=self.head(h))
        greedy = dist.probs.argmax(-1)
        return dist.entropy(), dist.log_prob(greedy)


def main():
    torch.manual_seed(0)
    compile_run(SamplerStats(), torch.randn(3, 16))


if __name__ == "__main__":
    main()
