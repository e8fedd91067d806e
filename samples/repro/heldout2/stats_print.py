"""A layer that prints its activation statistics with an f-string format of tensors."""

import torch
from _run import compile_run


class Chatty(torch.nn.Module):
    def __init__(self, d=16):
        super().__init__()
        self.fc = torch.nn.Linear(d, d)

    def forward(self, x):
        y = torch.sigmoid(self.fc(x))
        print(f"[stats] mean={y.mean():.4f} max={y.max():.4f}")
        return y


if __name__ == "__main__":
    torch.manual_seed(0)
    compile_run(Chatty(), torch.randn(4, 16))
