"""A custom op without a fake kernel, in a region that may break the graph (fullgraph=False still fails)."""

import torch
from _run import compile_run


@torch.library.custom_op("fakemodels::scaled_gelu", mutates_args=())
def scaled_gelu(x: torch.Tensor, scale: float) -> torch.Tensor:
    return torch.nn.functional.gelu(x) * scale


class Block(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.lin = torch.nn.Linear(16, 16)

    def forward(self, x):
        return scaled_gelu(self.lin(x), 0.5)


if __name__ == "__main__":
    torch.manual_seed(0)
    compile_run(Block(), torch.randn(4, 16), fullgraph=False)
