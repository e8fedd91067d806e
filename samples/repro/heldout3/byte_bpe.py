"""A byte-level tokenizer in forward: the text's UTF-8 bytes, merged by a small pair table, then embedded."""

import torch
from _run import compile_run

MERGES = {(116, 104): 256, (256, 101): 257}  # "th" -> 256, "the" -> 257


def encode(text: str) -> list[int]:
    ids = list(text.encode("utf-8"))
    changed = True
    while changed:
        changed = False
        out, i = [], 0
        while i < len(ids):
            pair = tuple(ids[i:i + 2])
            if pair in MERGES:
                out.append(MERGES[pair])
                i += 2
                changed = True
            else:
                out.append(ids[i])
                i += 1
        ids = out
    return ids


class ByteEmbed(torch.nn.Module):
    def __init__(self, d=8):
        super().__init__()
        self.emb = torch.nn.Embedding(260, d)

    def forward(self, text, scale):
        return self.emb(torch.tensor(encode(text))) * scale


if __name__ == "__main__":
    torch.manual_seed(0)
    compile_run(ByteEmbed(), "the theme", torch.randn(8))
