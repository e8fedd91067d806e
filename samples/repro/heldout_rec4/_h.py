"""Shared by the held-out recording programs: compile, run once, print what came out."""

import torch


def show(out):
    if isinstance(out, torch.Tensor):
        return f"Tensor{tuple(out.shape)} sum={out.detach().double().sum().item():.5g}"
    if isinstance(out, (tuple, list)):
        return "(" + ", ".join(show(o) for o in out) + ")"
    return repr(out)


def run(fn, *args, fullgraph=True, backend="eager", **kw):
    out = torch.compile(fn, backend=backend, fullgraph=fullgraph, **kw)(*args)
    print(f"compiled run done: {show(out)}", flush=True)
    return out
