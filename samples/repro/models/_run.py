"""Shared by the models: run a module compiled, print the result's values (the verify step compares them)."""

import os
import sys

import torch

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))  # samples/repro
from harness import report  # noqa: E402


# Only compile_run is this folder's own, and it stays at these lines: its frame (`_run.py", line 19, in
# compile_run`) is in logs recorded from these models (samples/fix), and a re-recording must show the same
# frame. Moving it, or any line above it, would make them differ. The rest of the harness is ../harness.py,
# which the held-out batches share (verify_fixes and the tests' `repro` fixture copy all of samples/repro, so
# it travels with them).
def compile_run(model, *args, fullgraph=True, backend="eager"):
    torch.manual_seed(0)
    out = torch.compile(model, backend=backend, fullgraph=fullgraph)(*args)
    report(out)
