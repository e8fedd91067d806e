"""Shared by the held-out models: run a module compiled (fullgraph=True), print the result's values (the verify
step compares them with an eager run). The third-party-like packages live in site-packages/ beside this file."""

import os
import sys

import torch

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "site-packages"))


def report(out) -> None:
    outs = out if isinstance(out, (tuple, list)) else (out,)
    parts = [f"{tuple(o.shape)} {o.dtype} sum={o.detach().double().sum().item():.6g}" for o in outs]
    print("result: " + "; ".join(parts), flush=True)


def compile_run(model, *args, fullgraph=True, backend="eager"):
    torch.manual_seed(0)
    out = torch.compile(model, backend=backend, fullgraph=fullgraph)(*args)
    report(out)
