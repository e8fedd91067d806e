"""Token expansion with repeat_interleave on per-request counts, then a view into (tokens, heads, dim): the
unbacked length meets a view without a torch._check, under capture_dynamic_output_shape_ops."""

import torch
import torch._dynamo

from _h import run


def expand(h: torch.Tensor, counts: torch.Tensor) -> torch.Tensor:
    rows = torch.repeat_interleave(h, counts, dim=0)  # expect: repeat-dyn
    return rows.view(-1, 2, 4)  # expect: unbacked-view


def main(fullgraph):
    torch._dynamo.config.capture_dynamic_output_shape_ops = True
    run(expand, torch.randn(3, 8), torch.tensor([1, 2, 1]), fullgraph=fullgraph)
