"""What every held-out batch's harness shares: its site-packages/ on the path, the result line, the arguments.

A batch (samples/repro/heldoutN, heldout_recN) keeps a small harness of its own, `_run.py` (or `_h.py` and
`run.py`), holding only the function that calls torch.compile (and `run.py`'s `main`): its file, line and
text are frames in every log recorded from the batch, so they stay where the recordings show them. The rest
is here. samples/repro/README.md says how a new batch uses it.
"""

from __future__ import annotations

import argparse
import os
import sys


def use_site_packages(harness_file: str) -> None:
    """Put the batch's third-party-like packages (site-packages/ beside its harness) first on the path."""
    sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(harness_file)), "site-packages"))


def report(out) -> None:
    """A held-out model's `result:` line (shapes, dtypes, sums): verify_fixes compares it with eager's."""
    outs = out if isinstance(out, (tuple, list)) else (out,)
    parts = [f"{tuple(o.shape)} {o.dtype} sum={o.detach().double().sum().item():.6g}" for o in outs]
    print("result: " + "; ".join(parts), flush=True)


def show(out) -> str:
    """What a held-out recording program's compiled run returned, in a line (tensors by shape and sum)."""
    import torch

    if isinstance(out, torch.Tensor):
        return f"Tensor{tuple(out.shape)} sum={out.detach().double().sum().item():.5g}"
    if isinstance(out, (tuple, list)):
        return "(" + ", ".join(show(o) for o in out) + ")"
    return repr(out)


def program_args() -> argparse.Namespace:
    """`run.py <module> [--no-fullgraph]`: the recording program to import, and whether it compiles whole."""
    ap = argparse.ArgumentParser()
    ap.add_argument("name")
    ap.add_argument("--no-fullgraph", action="store_true")
    return ap.parse_args()
