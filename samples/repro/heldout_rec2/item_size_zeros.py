"""Live-slot buffer: the number of live slots is read back with .item() (capture_scalar_outputs on) and used
as a size for new_zeros without torch._check_is_size."""

import torch
import torch._dynamo

from _h import run


def live_rows(h: torch.Tensor, mask: torch.Tensor) -> torch.Tensor:
    n = int(mask.sum().item())
    out = h.new_zeros(n, h.shape[1])  # expect: unbacked-size
    return out.sum(0) + h.sum(0)


def main(fullgraph):
    torch._dynamo.config.capture_scalar_outputs = True
    run(live_rows, torch.randn(5, 4), torch.tensor([1, 0, 1, 1, 0]), fullgraph=fullgraph)
