"""An MLP whose activation helper prints a debug line (user-code culprit one call below forward)."""

import torch
from _run import compile_run


def gated_act(x: torch.Tensor) -> torch.Tensor:
    gate, up = x.chunk(2, dim=-1)
    print("gated_act", x.shape)
    return torch.nn.functional.silu(gate) * up


class MLP(torch.nn.Module):
    def __init__(self, d=32):
        super().__init__()
        self.up = torch.nn.Linear(d, 4 * d)
        self.down = torch.nn.Linear(2 * d, d)

    def forward(self, x):
        return self.down(gated_act(self.up(x)))


if __name__ == "__main__":
    torch.manual_seed(0)
    compile_run(MLP(), torch.randn(8, 32))
