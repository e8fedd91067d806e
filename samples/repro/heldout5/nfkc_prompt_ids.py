"""Prompt normalisation in forward: unicodedata.normalize("NFKC", ...) then a char-level vocab lookup."""

import unicodedata

import torch
from _run import compile_run

VOCAB = {c: i for i, c in enumerate(" abcdefghijklmnopqrstuvwxyz0123456789.,!?")}


class CharEncoder(torch.nn.Module):
    def __init__(self, d=16):
        super().__init__()
        self.emb = torch.nn.Embedding(len(VOCAB) + 1, d)

    def forward(self, prompt: str):
        text = unicodedata.normalize("NFKC", prompt).lower()
        ids = torch.tensor([VOCAB.get(c, len(VOCAB)) for c in text])
        return self.emb(ids).mean(0)


def main():
    torch.manual_seed(0)
    compile_run(CharEncoder(), "Ｈｅｌｌｏ, world ﬁne!")


if __name__ == "__main__":
    main()
