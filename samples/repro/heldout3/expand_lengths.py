"""Per-sequence embeddings broadcast to tokens with repeat_interleave by a lengths tensor (data-dependent size)."""

import torch
from _run import compile_run


class ExpandBySeq(torch.nn.Module):
    def __init__(self, n_seq=3, d=8):
        super().__init__()
        self.seq_emb = torch.nn.Parameter(torch.randn(n_seq, d))

    def forward(self, tokens, lengths):
        return tokens + torch.repeat_interleave(self.seq_emb, lengths, dim=0)


if __name__ == "__main__":
    torch.manual_seed(0)
    compile_run(ExpandBySeq(), torch.randn(9, 8), torch.tensor([2, 3, 4]))
