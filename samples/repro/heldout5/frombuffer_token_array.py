"""Token ids kept in an array.array('i') by the tokenizer and viewed with torch.frombuffer in forward."""

import array

import torch
from _run import compile_run


class TokenEmbed(torch.nn.Module):
    def __init__(self, vocab=50, d=16):
        super().__init__()
        self.emb = torch.nn.Embedding(vocab, d)

    def forward(self, ids: array.array):
        t = torch.frombuffer(ids, dtype=torch.int32).long()
        return self.emb(t).mean(0)


def main():
    torch.manual_seed(0)
    compile_run(TokenEmbed(), array.array("i", [3, 14, 15, 9, 26, 5]))


if __name__ == "__main__":
    main()
