"""An op made with the functional torch.library.define + @torch.library.impl(..., "cpu"), and no fake/Meta kernel."""

import torch
from _run import compile_run

torch.library.define("heldout6::clip_rows", "(Tensor x, float max_norm) -> Tensor")


@torch.library.impl("heldout6::clip_rows", "cpu")
def _clip_rows(x, max_norm):
    norms = x.norm(dim=-1, keepdim=True).clamp_min(1e-6)
    return x * (max_norm / norms).clamp(max=1.0)


class Clipped(torch.nn.Module):
    def __init__(self, d=8):
        super().__init__()
        self.fc = torch.nn.Linear(d, d)

    def forward(self, x):
        return torch.ops.heldout6.clip_rows(self.fc(x), 1.0)


def main():
    torch.manual_seed(0)
    with torch.no_grad():
        compile_run(Clipped(), torch.randn(3, 8))


if __name__ == "__main__":
    main()
