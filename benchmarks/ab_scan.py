#!/usr/bin/env python3
"""Two crashlens trees and grep on the same generated logs, taking turns pair by pair: paired ratios.

    python benchmarks/ab_scan.py --before /path/to/other/tree/.venv/bin/crashlens --pairs 9
    python benchmarks/ab_scan.py --before OTHER --shapes startup --sizes 300M --pairs 15

On a shared, noisy machine two trees timed minutes apart are not comparable; timed in turns (before,
after, grep; the order rotating from one pair to the next, so neither tree always runs first), each
tree's time is divided by grep's in the same pair. It prints, per shape, the median and range of the
pairs' wall and CPU (user + sys, from wait4) ratios to `grep -c -F` for each tree, the median of the
pairs' after/before ratios (grep aside: the steadier figure on a busy machine), and the crashes
found (benchmarks/gen_log.py's verify: each crash with the diagnosis it gets alone). Not part of the
test suite. Both trees' bytecode must be written first (bench_scan.compile_bytecode explains why):
`python -m compileall -q src/crashlens` in each.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import sys
import tempfile
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
import bench_scan
import gen_log


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--before", required=True, help="the other tree's crashlens executable")
    ap.add_argument("--after", default=None, help="this tree's crashlens executable (default: beside this Python)")
    ap.add_argument("--sizes", default="300M")
    ap.add_argument("--shapes", default="traffic,startup,warnings")
    ap.add_argument("--pairs", type=int, default=9)
    ap.add_argument("--tmp", default=tempfile.gettempdir())
    ap.add_argument("--json", action="store_true")
    a = ap.parse_args()
    after = [a.after] if a.after else bench_scan.crashlens_cmd()
    trees = {"before": [a.before], "after": after}
    rows = []
    ok = True
    for label, shape in [(x, y) for x in a.sizes.split(",") for y in a.shapes.split(",")]:
        size = gen_log.parse_size(label)
        name = label if shape == "traffic" else f"{shape}-{label}"
        path = os.path.join(a.tmp, f"crashlens-bench-{name}.log")
        crashes = gen_log.ensure(path, size, shape=shape)
        bench_scan.warm(path)
        cmds = {k: [*v, "scan", "--format", "json", path] for k, v in trees.items()}
        cmds["grep"] = [*bench_scan.GREP, path]
        wall: dict[str, list[float]] = {k: [] for k in cmds}
        cpu: dict[str, list[float]] = {k: [] for k in cmds}
        found: dict[str, int] = {}
        order = list(cmds)
        for i in range(a.pairs):
            for k in order[i % 3:] + order[:i % 3]:
                w, _, out, c = bench_scan.timed(cmds[k], stdout=None)
                wall[k].append(w)
                cpu[k].append(c)
                if k != "grep" and k not in found:
                    found[k] = gen_log.verify(crashes, json.loads(out))[0]
        row: dict[str, object] = {"size": label, "shape": shape, "pairs": a.pairs,
                                  "grep_s": statistics.median(wall["grep"]),
                                  "grep_cpu_s": statistics.median(cpu["grep"]), "of": len(crashes)}
        for k in trees:
            r = [x / g for x, g in zip(wall[k], wall["grep"])]
            rc = [x / max(g, 1e-3) for x, g in zip(cpu[k], cpu["grep"])]
            row[k] = {"ratio": statistics.median(r), "range": (min(r), max(r)), "cpu_ratio": statistics.median(rc),
                      "s": statistics.median(wall[k]), "cpu_s": statistics.median(cpu[k]), "found": found[k]}
            ok &= found[k] == len(crashes)
        # The trees against each other, pair by pair (grep aside): the steadier figure on a busy machine.
        row["after_vs_before"] = {
            "wall": statistics.median(x / y for x, y in zip(wall["after"], wall["before"])),
            "cpu": statistics.median(x / y for x, y in zip(cpu["after"], cpu["before"])),
        }
        rows.append(row)
        if not a.json:
            print(f"{label:>5} {shape:<8} grep {row['grep_s']:.3f}s ({row['grep_cpu_s']:.3f}s CPU), {a.pairs} pairs, "
                  f"load {os.getloadavg()[0]:.1f}", flush=True)
            for k in trees:
                t = row[k]
                print(f"      {k:<6} wall {t['ratio']:5.2f}x ({t['range'][0]:.2f}-{t['range'][1]:.2f})  "  # type: ignore[index]
                      f"CPU {t['cpu_ratio']:5.2f}x  {t['s']:.3f}s ({t['cpu_s']:.3f}s CPU)  "  # type: ignore[index]
                      f"found {t['found']}/{len(crashes)}", flush=True)  # type: ignore[index]
            ab = row["after_vs_before"]
            print(f"      after/before, pair by pair: wall {ab['wall']:.3f}  CPU {ab['cpu']:.3f}", flush=True)  # type: ignore[index]
    if a.json:
        print(json.dumps(rows, indent=2))
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
