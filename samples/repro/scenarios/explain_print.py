"""A user prints torch._dynamo.explain()'s report for a function that calls print: one graph break."""

import torch


def f(x: torch.Tensor) -> torch.Tensor:
    x = x + 1
    print("step")  # expect: explain-print
    return x * 2


def main(fullgraph: bool) -> None:
    print(torch._dynamo.explain(f)(torch.randn(4)), flush=True)
