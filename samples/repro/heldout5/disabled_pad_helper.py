"""A padding helper marked @torch.compiler.disable long ago (it used to log), called from a fullgraph forward."""

import torch
from _run import compile_run


@torch.compiler.disable
def pad_to_multiple(x: torch.Tensor, multiple: int) -> torch.Tensor:
    pad = (-x.shape[0]) % multiple
    return torch.nn.functional.pad(x, (0, 0, 0, pad))


class PaddedProj(torch.nn.Module):
    def __init__(self, d=16):
        super().__init__()
        self.proj = torch.nn.Linear(d, d)

    def forward(self, x):
        return self.proj(pad_to_multiple(x, 8))


def main():
    torch.manual_seed(0)
    compile_run(PaddedProj(), torch.randn(5, 16))


if __name__ == "__main__":
    main()
