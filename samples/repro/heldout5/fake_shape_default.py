"""Default torch.compile (inductor, no fullgraph), under no_grad: a custom op pooling feature pairs whose fake forgot the halving."""

import torch
from _run import compile_run


@torch.library.custom_op("heldout5::pair_max", mutates_args=())
def pair_max(x: torch.Tensor) -> torch.Tensor:
    return x.view(x.shape[0], -1, 2).amax(-1)          # (N, D) -> (N, D // 2)


@pair_max.register_fake
def _(x):
    return torch.empty_like(x)


class PairPool(torch.nn.Module):
    def __init__(self, d=16):
        super().__init__()
        self.proj = torch.nn.Linear(d, d)

    def forward(self, x):
        return pair_max(torch.relu(self.proj(x))) * 2.0 + 1.0


def main():
    torch.manual_seed(0)
    with torch.no_grad():
        compile_run(PairPool(), torch.randn(4, 16), fullgraph=False, backend="inductor")


if __name__ == "__main__":
    main()
