"""A custom op that drops padding tokens; its fake was written as the real code (.item() on a fake tensor)."""

import torch
from _run import compile_run


@torch.library.custom_op("heldout5::drop_pad", mutates_args=())
def drop_pad(x: torch.Tensor, keep: torch.Tensor) -> torch.Tensor:
    return x[keep]


@drop_pad.register_fake
def _(x, keep):
    n = int(keep.sum().item())
    return x.new_empty(n, x.shape[1])


class PackTokens(torch.nn.Module):
    def __init__(self, d=16):
        super().__init__()
        self.proj = torch.nn.Linear(d, d)

    def forward(self, x, keep):
        return self.proj(drop_pad(x, keep)).sum(0)


def main():
    torch.manual_seed(0)
    compile_run(PackTokens(), torch.randn(6, 16), torch.tensor([True, True, False, True, False, True]))


if __name__ == "__main__":
    main()
