"""Shared by the held-out models: run a module compiled (fullgraph=True), print the result's values (the verify
step compares them with an eager run). The third-party-like packages live in site-packages/ beside this file."""

import os
import sys

import torch

sys.path.append(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))  # samples/repro, for harness.py
from harness import report, use_site_packages  # noqa: E402

use_site_packages(__file__)


# Only compile_run is this batch's own: its frame (`_run.py", line 21, in compile_run`) is in the logs
# recorded from the batch (samples/fix), so it stays at these lines, as they show it. The rest of the
# harness is ../harness.py, which every batch shares (samples/repro/README.md: a new batch copies this
# file as it is).
def compile_run(model, *args, fullgraph=True, backend="eager"):
    torch.manual_seed(0)
    out = torch.compile(model, backend=backend, fullgraph=fullgraph)(*args)
    report(out)
