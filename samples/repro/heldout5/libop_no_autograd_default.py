"""Default torch.compile (inductor): a bf16 activation-quant custom op (correct fake, no register_autograd) called
outside no_grad, with the projection's parameters requiring grad."""

import torch
from _run import compile_run


@torch.library.custom_op("heldout5::to_bf16_scaled", mutates_args=())
def to_bf16_scaled(x: torch.Tensor, scale: float) -> torch.Tensor:
    return (x * scale).to(torch.bfloat16)


@to_bf16_scaled.register_fake
def _(x, scale):
    return torch.empty_like(x, dtype=torch.bfloat16)


class Bf16Act(torch.nn.Module):
    def __init__(self, d=16):
        super().__init__()
        self.proj = torch.nn.Linear(d, d)

    def forward(self, x):
        h = to_bf16_scaled(self.proj(x), 0.5)
        return torch.cat([h, h.new_zeros(h.shape[0], 1)], dim=1).float()


def main():
    torch.manual_seed(0)
    compile_run(Bf16Act(), torch.randn(4, 16), fullgraph=False, backend="inductor")


if __name__ == "__main__":
    main()
