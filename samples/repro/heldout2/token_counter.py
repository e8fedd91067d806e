"""An embedding layer that counts the tokens it sees in the telemetry package (a counter under a lock)."""

import torch
from _run import compile_run

import telemetry


class CountedEmbedding(torch.nn.Module):
    def __init__(self, vocab=100, d=16):
        super().__init__()
        self.emb = torch.nn.Embedding(vocab, d)
        self.tokens = telemetry.counter("tokens")

    def forward(self, ids):
        self.tokens.add(ids.numel())
        return self.emb(ids).mean(1)


if __name__ == "__main__":
    torch.manual_seed(0)
    compile_run(CountedEmbedding(), torch.randint(0, 100, (3, 7)))
