"""A pinned host staging buffer (pin_memory=True) on a machine without an accelerator: fails in eager too."""

import torch
from _run import compile_run


class Staged(torch.nn.Module):
    def __init__(self, d=8):
        super().__init__()
        self.fc = torch.nn.Linear(d, d)

    def forward(self, x):
        stage = torch.empty(x.shape, dtype=x.dtype, pin_memory=True)
        stage.copy_(self.fc(x))
        return stage * 2


def main():
    torch.manual_seed(0)
    compile_run(Staged(), torch.randn(3, 8))


if __name__ == "__main__":
    main()
