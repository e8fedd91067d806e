"""Input saliency at inference: forward calls .backward() on the score to read the input's gradient."""

import torch
from _run import compile_run


class Saliency(torch.nn.Module):
    def __init__(self, d=8):
        super().__init__()
        self.fc = torch.nn.Linear(d, 1)

    def forward(self, x):
        x = x.detach().requires_grad_(True)
        score = self.fc(x).sum()
        score.backward()
        return x.grad.abs()


def main():
    torch.manual_seed(0)
    compile_run(Saliency(), torch.randn(3, 8))


if __name__ == "__main__":
    main()
