"""A legacy TorchScript helper (@torch.jit.script tanh-GELU) kept from an older export path, called in forward."""

import torch
from _run import compile_run


@torch.jit.script
def gelu_tanh(x: torch.Tensor) -> torch.Tensor:
    return 0.5 * x * (1.0 + torch.tanh(0.7978845608 * (x + 0.044715 * x * x * x)))


class FFN(torch.nn.Module):
    def __init__(self, d=32, hidden=64):
        super().__init__()
        self.up = torch.nn.Linear(d, hidden)
        self.down = torch.nn.Linear(hidden, d)

    def forward(self, x):
        return self.down(gelu_tanh(self.up(x)))


def main():
    torch.manual_seed(0)
    compile_run(FFN(), torch.randn(4, 32))


if __name__ == "__main__":
    main()
