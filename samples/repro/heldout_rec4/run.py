"""Run one held-out recording program: python heldout_rec4/run.py <module> [--no-fullgraph].

The programs sit beside this file; `site-packages/` holds `fastrope`, a third-party-like package that some of
them call (its failures are the library's, not the caller's)."""

import importlib
import os
import sys

sys.path.append(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))  # samples/repro, for harness.py
from harness import program_args, use_site_packages  # noqa: E402

use_site_packages(__file__)


# Only main is this batch's own: its frames (`run.py", line 20, in main`, and line 25) are in every log
# recorded from the batch (samples/corpus-heldout*/cases), so they stay at these lines. Rest: ../harness.py.
def main() -> int:
    args = program_args()
    importlib.import_module(args.name).main(fullgraph=not args.no_fullgraph)
    return 0


if __name__ == "__main__":
    sys.exit(main())
