"""An embedding model whose forward takes a prompt string and tokenizes it (lower, split, vocab lookup)."""

import torch
from _run import compile_run

VOCAB = {"<unk>": 0, "the": 1, "cat": 2, "sat": 3, "on": 4, "mat": 5, "a": 6}


class PromptEmbed(torch.nn.Module):
    def __init__(self, d=8):
        super().__init__()
        self.emb = torch.nn.Embedding(len(VOCAB), d)

    def forward(self, prompt: str, bias):
        words = prompt.lower().replace(",", " ").split()
        ids = [VOCAB.get(w, VOCAB["<unk>"]) for w in words]
        return self.emb(torch.tensor(ids)) + bias


if __name__ == "__main__":
    torch.manual_seed(0)
    compile_run(PromptEmbed(), "The cat sat, on a mat", torch.randn(8))
