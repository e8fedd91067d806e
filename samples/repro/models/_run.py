"""Shared by the models: run a module compiled, print the result's values (the verify step compares them)."""

import os
import sys

import torch

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))  # samples/repro


def report(out) -> None:
    outs = out if isinstance(out, (tuple, list)) else (out,)
    parts = [f"{tuple(o.shape)} {o.dtype} sum={o.detach().double().sum().item():.6g}" for o in outs]
    print("result: " + "; ".join(parts), flush=True)


def compile_run(model, *args, fullgraph=True, backend="eager"):
    torch.manual_seed(0)
    out = torch.compile(model, backend=backend, fullgraph=fullgraph)(*args)
    report(out)
