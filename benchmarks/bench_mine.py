#!/usr/bin/env python3
"""`crashlens mine` on a generated fleet: peak memory, and throughput against a single-file scan.

    python benchmarks/bench_mine.py --files 10000 --size 500K        # 5 GB, the issue's target
    python benchmarks/bench_mine.py --files 300 --size 200K          # a quick look
    python benchmarks/bench_mine.py --files 400 --size 500K --repeat 3 --seed 2   # ranges, another fleet

Ratios measured in the same run, never absolute times (the machine is shared):
- per-core throughput: log bytes per CPU second (user + system, of crashlens and its workers) of
  `mine -j 1` and `mine -j N` over the fleet, against `scan -j 1` of the same logs concatenated into
  one file (the gzipped ones into one .gz file); target: the scan's rate is at most 1.5x mine's;
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
    ap.add_argument("--seed", type=int, default=0, help="gen_fleet's seed")
    ap.add_argument("--crashes", type=int, default=3, help="gen_fleet's most crashes per log")
    ap.add_argument("--repeat", type=int, default=1,
                    help="throughput runs (scan, mine -j 1, mine -j N each time); ratios given as ranges")
    a = ap.parse_args()
    size = gen_log.parse_size(a.size)
    tag = f"fleet-{a.files}-{a.size}" + (f"-s{a.seed}" if a.seed else "") + (f"-c{a.crashes}" if a.crashes != 3 else "")
    root = Path(a.out) / tag
    man = root / "fleet.json"
    if not man.exists():
        t = time.perf_counter()
        gen_fleet.fleet(str(root), a.files, size, a.crashes, a.seed, jobs=a.jobs)
        print(f"generated {a.files} logs in {time.perf_counter() - t:.0f} s", file=sys.stderr)
    doc = json.loads(man.read_text())
    text_bytes = doc["text_bytes"]
    mine_j = ["mine", "--all", "--format", "json", "-j", str(a.jobs), str(root)]
    mj_wall, mj_cpu, peak, outj = run(mine_j, sample_rss=True)
    got = json.loads(outj)
    Path(str(root) + ".mine.json").write_bytes(outj)
    counts = {g["id"]: g["count"] for g in got["groups"]}
    # what each sample gives alone with today's crashlens (the manifest's figures are from when it was made)
    expected = gen_fleet.expected_counts(a.files, doc.get("crashes", 3), doc["seed"])
    mb = 1 << 20
    report: dict[str, object] = {
        "files": a.files,
        "seed": doc["seed"],
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
        # Like with like: the plain logs as one plain file, the gzipped ones as one .gz file (gen_fleet's
        # compression level), so the reference pays the same decompression and only mine's per-file
        # costs make the difference.
        one = Path(a.out) / f"{tag}.concat.log"
        one_gz = Path(str(one) + ".gz")
        if not one_gz.exists():
            with open(one, "wb") as w, gzip.open(one_gz, "wb", compresslevel=1) as wz:
                for p in sorted(root.rglob("server-*")):  # noqa: FURB122
                    if p.suffix == ".gz":
                        wz.write(gzip.decompress(p.read_bytes()))
                    else:
                        w.write(p.read_bytes())
        scans, ones, js = [], [], [mj_cpu]
        same = True
        for r in range(a.repeat):
            scans.append(run(["scan", "--no-audit", "-j", "1", "--format", "json", str(one), str(one_gz)])[1])
            _, m1_cpu, _, out1 = run(["mine", "--all", "--format", "json", "-j", "1", str(root)])
            ones.append(m1_cpu)
            same = same and json.loads(out1)["groups"] == got["groups"]
            if r:
                js.append(run(mine_j)[1])
        r1 = [m / s for m, s in zip(ones, scans)]
        rj = [m / s for m, s in zip(js, scans)]

        def span(xs: list[float], nd: int = 2) -> object:
            return round(xs[0], nd) if len(xs) == 1 else [round(min(xs), nd), round(max(xs), nd)]

        report.update({
            "counts_match": bool(report["counts_match"]) and same,
            "runs": a.repeat,
            "scan_1_file_mb_per_cpu_s": span([text_bytes / mb / c for c in scans], 1),
            "mine_j1_mb_per_cpu_s": span([text_bytes / mb / c for c in ones], 1),
            f"mine_j{a.jobs}_mb_per_cpu_s": span([text_bytes / mb / c for c in js], 1),
            "ratio_scan_to_mine_j1": span(r1),
            f"ratio_scan_to_mine_j{a.jobs}_per_core": span(rj),
            "load_average": round(os.getloadavg()[0], 1),
        })
    print(json.dumps(report, indent=1))
    return 0 if report["counts_match"] else 1


if __name__ == "__main__":
    sys.exit(main())
