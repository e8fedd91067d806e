"""Run one held-out recording program: python heldout_rec4/run.py <module> [--no-fullgraph].

The programs sit beside this file; `site-packages/` holds `fastrope`, a third-party-like package that some of
them call (its failures are the library's, not the caller's)."""

import argparse
import importlib
import os
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "site-packages"))


def main() -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("name")
    ap.add_argument("--no-fullgraph", action="store_true")
    args = ap.parse_args()
    importlib.import_module(args.name).main(fullgraph=not args.no_fullgraph)
    return 0


if __name__ == "__main__":
    sys.exit(main())
