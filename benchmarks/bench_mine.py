#!/usr/bin/env python3
"""`crashlens mine` on a generated fleet: peak memory, and throughput against a single-file scan.

    python benchmarks/bench_mine.py --files 10000 --size 500K        # 5 GB, the issue's target
    python benchmarks/bench_mine.py --files 300 --size 200K          # a quick look

Ratios measured in the same run, never absolute times (the machine is shared):
- per-core throughput: log bytes per CPU second (user + system, of crashlens and its workers) of
  `mine -j 1` and `mine -j N` over the fleet, against `scan -j 1` of the same logs concatenated into
  one file; target: the scan's rate is at most 1.5x mine's;
- peak memory: the largest sum of resident sets of crashlens and its workers during `mine -j N`
  (sampled from /proc every 20 ms), and the parent's own peak (getrusage); target: under 300 MB;
- correctness: the group counts equal what gen_fleet buried.
"""

from __future__ import annotations

import argparse
import gzip
import json
import os
import resource
import subprocess
import sys
import threading
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))
import gen_fleet
import gen_log

EXE = [str(Path(sys.executable).parent / "crashlens")]


def _tree_rss(pid: int) -> int:
    """Resident bytes of a process and all its descendants."""
    total = 0
    todo = [pid]
    while todo:
        p = todo.pop()
        try:
            with open(f"/proc/{p}/statm") as fh:
                total += int(fh.read().split()[1]) * os.sysconf("SC_PAGE_SIZE")
            with open(f"/proc/{p}/task/{p}/children") as fh:
                todo += [int(x) for x in fh.read().split()]
        except (OSError, ValueError):
            pass
    return total


def run(args: list[str], sample_rss: bool = False) -> tuple[float, float, int, bytes]:
    """(wall s, CPU s of the process tree, peak tree RSS bytes, stdout)."""
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    t0 = time.perf_counter()
    p = subprocess.Popen(EXE + args, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL)
    peak = 0
    stop = threading.Event()

    def sample() -> None:
        nonlocal peak
        while not stop.is_set():
            peak = max(peak, _tree_rss(p.pid))
            time.sleep(0.02)

    t = threading.Thread(target=sample)
    if sample_rss:
        t.start()
    out, _ = p.communicate()
    stop.set()
    if sample_rss:
        t.join()
    wall = time.perf_counter() - t0
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    cpu = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
    if p.returncode not in (0, 1):
        raise SystemExit(f"crashlens {' '.join(args)}: exit {p.returncode}")
    return wall, cpu, peak, out


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--files", type=int, default=300)
    ap.add_argument("--size", default="200K")
    ap.add_argument("--jobs", type=int, default=os.cpu_count() or 1)
    ap.add_argument("--out", default=str(HERE / "out"))
    ap.add_argument("--memory-only", action="store_true",
                    help="only `mine -j N` (peak memory, counts); no throughput runs")
    a = ap.parse_args()
    size = gen_log.parse_size(a.size)
    root = Path(a.out) / f"fleet-{a.files}-{a.size}"
    man = root / "fleet.json"
    if not man.exists():
        t = time.perf_counter()
        gen_fleet.fleet(str(root), a.files, size, jobs=a.jobs)
        print(f"generated {a.files} logs in {time.perf_counter() - t:.0f} s", file=sys.stderr)
    doc = json.loads(man.read_text())
    text_bytes = doc["text_bytes"]
    mj_wall, mj_cpu, peak, outj = run(["mine", "--all", "--format", "json", "-j", str(a.jobs), str(root)],
                                      sample_rss=True)
    got = json.loads(outj)
    Path(str(root) + ".mine.json").write_bytes(outj)
    counts = {g["id"]: g["count"] for g in got["groups"]}
    # what each sample gives alone with today's crashlens (the manifest's figures are from when it was made)
    expected = gen_fleet.expected_counts(a.files, doc.get("crashes", 3), doc["seed"])
    mb = 1 << 20
    report: dict[str, object] = {
        "files": a.files,
        "log_bytes": text_bytes,
        "on_disk_bytes": sum(p.stat().st_size for p in root.rglob("server-*")),
        "crashes_buried": doc["buried"],
        "crashes_found": got["crashes"],
        "counts_match": counts == expected,
        f"mine_j{a.jobs}_mb_per_cpu_s": round(text_bytes / mb / mj_cpu, 1),
        f"mine_j{a.jobs}_wall_s": round(mj_wall, 1),
        f"peak_rss_mb_j{a.jobs}_tree": round(peak / mb, 1),
        "peak_rss_mb_largest_process": round(resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss / 1024, 1),
    }
    if not a.memory_only:
        one = Path(a.out) / f"fleet-{a.files}-{a.size}.concat.log"
        if not one.exists():
            with open(one, "wb") as w:
                for p in sorted(root.rglob("server-*")):  # noqa: FURB122
                    w.write(gzip.decompress(p.read_bytes()) if p.suffix == ".gz" else p.read_bytes())
        _, scan_cpu, _, _ = run(["scan", "--no-audit", "-j", "1", "--format", "json", str(one)])
        _, m1_cpu, _, out1 = run(["mine", "--all", "--format", "json", "-j", "1", str(root)])
        report.update({
            "counts_match": bool(report["counts_match"]) and json.loads(out1)["groups"] == got["groups"],
            "scan_1_file_mb_per_cpu_s": round(text_bytes / mb / scan_cpu, 1),
            "mine_j1_mb_per_cpu_s": round(text_bytes / mb / m1_cpu, 1),
            "ratio_scan_to_mine_j1": round(m1_cpu / scan_cpu, 2),
            f"ratio_scan_to_mine_j{a.jobs}_per_core": round(mj_cpu / scan_cpu, 2),
        })
    print(json.dumps(report, indent=1))
    return 0 if report["counts_match"] else 1


if __name__ == "__main__":
    sys.exit(main())
