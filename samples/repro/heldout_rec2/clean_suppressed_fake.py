"""A run that goes on: a custom op's fake implementation raises while dynamo traces, suppress_errors is on,
so dynamo logs the error and the frame runs in eager."""

import torch
import torch._dynamo

from _h import show


@torch.library.custom_op("rec2::topk_mask", mutates_args=())
def topk_mask(x: torch.Tensor, k: int) -> torch.Tensor:
    return torch.zeros_like(x).scatter(-1, x.topk(k, -1).indices, 1.0)


@topk_mask.register_fake
def _(x, k):
    raise NotImplementedError("topk_mask: no fake implementation for this build")  # expect: fake-raises


def masked(x: torch.Tensor) -> torch.Tensor:
    return x * topk_mask(x, 2)


def main(fullgraph):
    torch._dynamo.config.suppress_errors = True
    out = torch.compile(masked, backend="eager", fullgraph=fullgraph)(torch.randn(2, 5))
    print(f"ran (eager fallback): {show(out)}", flush=True)
