#!/usr/bin/env python3
"""Re-record samples/raw/issue13/<torch>/<case>.log from real PyTorch runs of cases.py.

    python samples/repro/issue13/record.py --python /work/venvs/t2.13.0/bin/python [--python ...]

Each case runs in its own process, cwd = this directory, stdout+stderr merged, captured as bytes; the log is a
`# crashlens sample: ...` header line followed by those bytes, unaltered. Standard library only.
"""

import argparse
import os
import subprocess
import sys
from pathlib import Path

HERE = Path(__file__).resolve().parent
RAW = HERE.parent.parent / "raw" / "issue13"
CASES = ["tp-quantize", "tp-flag", "tp-lock", "param-in-forward", "bincount", "nonzero", "device-mismatch",
         "shape-mismatch", "next-no-default", "zip-strict", "no-cuda", "environ-read", "per-call-hash", "suppressed-backend", "eager-cuda",
         "fake-signature", "fake-dispatch", "broken-cxx"]


def main() -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("--python", action="append", required=True, help="an interpreter with torch (repeatable)")
    ap.add_argument("--only", default="", help="comma-separated case names")
    a = ap.parse_args()
    only = [c for c in a.only.split(",") if c] or CASES
    for py in a.python:
        ver = subprocess.run([py, "-c", "import torch, sys; print(torch.__version__.split('+')[0], sys.version.split()[0])"],
                             capture_output=True, text=True, check=True).stdout.split()
        out = RAW / ver[0]
        out.mkdir(parents=True, exist_ok=True)
        for case in only:
            env = dict(os.environ, PYTHONUNBUFFERED="1")
            p = subprocess.run([py, "cases.py", case], cwd=HERE, capture_output=False, stdout=subprocess.PIPE,
                               stderr=subprocess.STDOUT, env=env, timeout=600)
            head = (f"# crashlens sample: recorded by samples/repro/issue13/record.py, case {case}, torch {ver[0]}, "
                    f"python {ver[1]}, exit {p.returncode}\n")
            (out / f"{case}.log").write_bytes(head.encode() + p.stdout)
            print(f"{ver[0]} {case}: exit {p.returncode}", file=sys.stderr)
    return 0


if __name__ == "__main__":
    sys.exit(main())
