"""Shared by the held-out recording programs: compile, run once, print what came out."""

import os
import sys

import torch

sys.path.append(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))  # samples/repro, for harness.py
from harness import show  # noqa: E402,F401 (the programs import it from here)


# Only run is this batch's own: its frame (`_h.py", line 15, in run`) is in every log recorded from
# the batch (samples/corpus-heldout*/cases), so it stays here, as they show it. The rest: ../harness.py.
def run(fn, *args, fullgraph=True, backend="eager", **kw):
    out = torch.compile(fn, backend=backend, fullgraph=fullgraph, **kw)(*args)
    print(f"compiled run done: {show(out)}", flush=True)
    return out
