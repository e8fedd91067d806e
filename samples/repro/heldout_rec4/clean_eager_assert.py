"""Not a dynamo failure: the compiled layer runs, then the eager numerics check torch.testing.assert_close compares it
with a reference that uses another epsilon, and raises AssertionError."""

import torch

from _h import run


def norm(x: torch.Tensor) -> torch.Tensor:
    return torch.nn.functional.layer_norm(x, x.shape[-1:], eps=1e-5)


def main(fullgraph):
    x = torch.randn(3, 4) * 1e-3
    out = run(norm, x, fullgraph=fullgraph)
    ref = torch.nn.functional.layer_norm(x, x.shape[-1:], eps=1e-1)
    torch.testing.assert_close(out, ref)  # expect: eager-assert-close
