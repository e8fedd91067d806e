"""Log-probs of the target ids gathered from logits whose vocab is one short (an off-by-one vocab size): index out of range in eager too."""

import torch
from _run import compile_run


class TokenLogp(torch.nn.Module):
    def __init__(self, d=8, vocab=10):
        super().__init__()
        self.head = torch.nn.Linear(d, vocab - 1)          # bug: the vocab has `vocab` ids

    def forward(self, h, targets):
        logp = torch.log_softmax(self.head(h), dim=-1)
        return logp.gather(-1, targets.unsqueeze(-1)).squeeze(-1)


def main():
    torch.manual_seed(0)
    compile_run(TokenLogp(), torch.randn(3, 8), torch.tensor([2, 9, 4]))


if __name__ == "__main__":
    main()
