"""Per-row entropy logged through numpy on logits that require grad: .numpy() fails in eager too."""

import numpy as np
import torch
from _run import compile_run


class EntropyHead(torch.nn.Module):
    def __init__(self, d=16, vocab=20):
        super().__init__()
        self.head = torch.nn.Linear(d, vocab)

    def forward(self, h):
        logits = self.head(h)
        p = np.exp(logits.numpy() - logits.numpy().max(-1, keepdims=True))
        p /= p.sum(-1, keepdims=True)
        entropy = torch.from_numpy(-(p * np.log(p)).sum(-1))
        return torch.log_softmax(logits, dim=-1), entropy


def main():
    torch.manual_seed(0)
    compile_run(EntropyHead(), torch.randn(3, 16))


if __name__ == "__main__":
    main()
