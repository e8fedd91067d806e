"""A run that goes on: a custom backend raises, suppress_errors is on, dynamo logs it and falls back to eager."""

import torch
import torch._dynamo

from _h import show


def flaky_backend(gm, example_inputs):
    raise RuntimeError("flaky_backend: no kernel for this graph")  # expect: flaky-backend


def f(x):
    return x.sin() + x.cos()


def main(fullgraph):
    torch._dynamo.config.suppress_errors = True
    out = torch.compile(f, backend=flaky_backend, fullgraph=fullgraph)(torch.randn(3))
    print(f"ran (eager fallback): {show(out)}", flush=True)
