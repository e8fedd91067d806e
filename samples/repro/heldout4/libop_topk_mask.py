"""A top-k logits mask written as a torch.library custom op (a C++ kernel in production) without a fake impl."""

import torch
from _run import compile_run


@torch.library.custom_op("heldout4::topk_mask", mutates_args=())
def topk_mask(logits: torch.Tensor, k: int) -> torch.Tensor:
    kth = torch.topk(logits, k, dim=-1).values[..., -1:]
    return logits.masked_fill(logits < kth, float("-inf"))


class TopKSampler(torch.nn.Module):
    def __init__(self, d=16, vocab=40, k=5):
        super().__init__()
        self.head = torch.nn.Linear(d, vocab)
        self.k = k

    def forward(self, h):
        return torch.softmax(topk_mask(self.head(h), self.k), dim=-1)


if __name__ == "__main__":
    torch.manual_seed(0)
    compile_run(TopKSampler(), torch.randn(3, 16))
