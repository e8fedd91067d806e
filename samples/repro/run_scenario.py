"""Run one crash scenario: python run_scenario.py <name> [--no-fullgraph]."""

import argparse
import importlib
import sys


def main() -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("name")
    ap.add_argument("--no-fullgraph", action="store_true")
    args = ap.parse_args()
    mod = importlib.import_module(f"scenarios.{args.name}")
    mod.main(fullgraph=not args.no_fullgraph)
    return 0


if __name__ == "__main__":
    sys.exit(main())
