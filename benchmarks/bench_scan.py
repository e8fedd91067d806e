#!/usr/bin/env python3
"""crashlens scan against grep on big generated server logs: wall time, crashes found, peak memory.

    python benchmarks/bench_scan.py                      # 10 MB, 100 MB and 1 GB logs in /tmp
    python benchmarks/bench_scan.py --sizes 10M --pairs 5
    python benchmarks/bench_scan.py --sizes 300M --shapes traffic,startup,warnings

For each size and filler shape (traffic; a start-up restart loop; torch warnings) it generates (once,
cached with a manifest) an SGLang-style log with 20 recorded crashes buried in it
(benchmarks/gen_log.py), warms the page cache, then runs, pair by pair (A B A B ...):
    crashlens scan --format json FILE
    grep -c -F 'Traceback (most recent call last)' FILE
and prints the median wall-time ratio (and the range over the pairs: a shared machine is noisy), the
median CPU-time ratio (user + sys, from wait4: on a machine whose cores are shared with other work it
moves less than wall time; crashlens's CPU is spread over its threads, so on idle cores its wall time is
below it), the load average, how many of the 20 crashes crashlens found with the diagnosis each gets when
scanned alone, and crashlens's peak RSS (from wait4, per run). Then the start-up time of `crashlens --version` and of
scans of small logs with and without a crash. Not part of the test suite. First it writes crashlens's
bytecode where it is missing (compile_bytecode; --no-compile leaves it), as an installed package has it.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
import gen_log

GREP = ["grep", "-c", "-F", "Traceback (most recent call last)"]


def crashlens_cmd() -> list[str]:
    exe = Path(sys.executable).parent / "crashlens"
    return [str(exe)] if exe.exists() else [shutil.which("crashlens") or "crashlens"]


def timed(cmd: list[str], stdout: int | None = subprocess.DEVNULL) -> tuple[float, int, bytes, float]:
    """(wall seconds, peak RSS in bytes, stdout, CPU seconds: user + sys) of one run; RSS and CPU from
    the kernel's accounting of it."""
    t0 = time.perf_counter()
    p = subprocess.Popen(cmd, stdout=subprocess.PIPE if stdout is None else stdout, stderr=subprocess.DEVNULL)
    out = p.stdout.read() if p.stdout is not None else b""
    _, _, ru = os.wait4(p.pid, 0)
    wall = time.perf_counter() - t0
    p.returncode = 0  # reaped above
    return wall, ru.ru_maxrss * 1024, out, ru.ru_utime + ru.ru_stime


def compile_bytecode() -> str | None:
    """Write crashlens's bytecode where it is missing or stale, as `pip install` does for an installed
    package; what was done, or None. Python compiles a module it has no bytecode for on every import
    and, under PYTHONDONTWRITEBYTECODE=1 (set on this project's machine) or with a source tree it may
    not write to, keeps nothing: an editable install then spent ~0.1 s of CPU a run compiling
    crashlens (measured: a 27-line scan took 0.19-0.21 s of CPU, 0.09-0.10 s with bytecode), a
    quarter of a 300 MB scan, and timed the compiler, not the scan."""
    import compileall
    import importlib.util

    try:
        spec = importlib.util.find_spec("crashlens")
    except ImportError:
        return None
    if spec is None or not spec.submodule_search_locations:
        return None
    pkg = Path(list(spec.submodule_search_locations)[0])
    stale = 0
    for src in pkg.rglob("*.py"):
        pyc = Path(importlib.util.cache_from_source(str(src)))
        stale += not pyc.exists() or pyc.stat().st_mtime < src.stat().st_mtime
    if not stale:
        return None
    compileall.compile_dir(str(pkg), quiet=1)
    return f"wrote the bytecode of {stale} crashlens modules (as pip install does) in {pkg}"


def warm(path: str) -> None:
    with open(path, "rb", buffering=0) as fh:
        while fh.read(16 << 20):
            pass


def bench_size(label: str, size: int, pairs: int, tmp: str, shape: str = "traffic") -> dict[str, object]:
    name = label if shape == "traffic" else f"{shape}-{label}"
    path = os.path.join(tmp, f"crashlens-bench-{name}.log")
    t0 = time.perf_counter()
    crashes = gen_log.ensure(path, size, shape=shape)
    gen_s = time.perf_counter() - t0
    warm(path)
    cl = [*crashlens_cmd(), "scan", "--format", "json", path]
    grep = [*GREP, path]
    a_times: list[float] = []
    b_times: list[float] = []
    a_cpu: list[float] = []
    b_cpu: list[float] = []
    loads: list[float] = []
    rss = 0
    found = -1
    grep_count = -1
    problems: list[str] = []
    for i in range(pairs):
        wall, peak, out, cpu = timed(cl, stdout=None)
        a_times.append(wall)
        a_cpu.append(cpu)
        rss = max(rss, peak)
        if i == 0:
            found, problems = gen_log.verify(crashes, json.loads(out))
        # Through a pipe, as crashlens's output: GNU grep stops at the first match when its output is
        # /dev/null, which would time something else.
        wall, _, out, cpu = timed(grep, stdout=None)
        b_times.append(wall)
        b_cpu.append(cpu)
        loads.append(os.getloadavg()[0])
        grep_count = int(out)
    ratios = [a / b for a, b in zip(a_times, b_times)]
    cpu_ratios = [a / max(b, 1e-3) for a, b in zip(a_cpu, b_cpu)]
    return {
        "size": label, "shape": shape, "bytes": os.path.getsize(path), "pairs": pairs, "generated_s": round(gen_s, 1),
        "crashlens_s": statistics.median(a_times), "grep_s": statistics.median(b_times),
        "ratio": statistics.median(ratios), "ratio_min": min(ratios), "ratio_max": max(ratios),
        "crashlens_cpu_s": statistics.median(a_cpu), "grep_cpu_s": statistics.median(b_cpu),
        "cpu_ratio": statistics.median(cpu_ratios), "load": (min(loads), max(loads)),
        "found": found, "of": len(crashes),
        "peak_rss_mb": rss / 2**20, "problems": problems, "grep_count": grep_count,
    }


def startup(runs: int) -> dict[str, tuple[float, float]]:
    """(median, best) milliseconds of --version and of scans of small logs, with and without a crash,
    in the default (terminal) format; the commands take turns so that a busy moment hits all alike."""
    samples = gen_log.ROOT / "samples"
    crash = samples / "sglang-1rank-pcg-fp4.log"  # 223 lines, one fatal crash: a rich panel
    cmds = {"--version": [*crashlens_cmd(), "--version"]}
    if (samples / "sglang-healthy.log").exists():
        cmds["scan, no crash"] = [*crashlens_cmd(), str(samples / "sglang-healthy.log")]
    if crash.exists():
        cmds["scan, one crash"] = [*crashlens_cmd(), str(crash)]
    times: dict[str, list[float]] = {name: [] for name in cmds}
    for name, cmd in cmds.items():
        timed(cmd)  # warm the OS caches
    for _ in range(runs):
        for name, cmd in cmds.items():
            times[name].append(timed(cmd)[0] * 1000)
    return {name: (statistics.median(t), min(t)) for name, t in times.items()}


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--sizes", default="10M,100M,1G")
    ap.add_argument("--shapes", default="traffic", help="filler shapes, of " + ",".join(sorted(gen_log.SHAPES)))
    ap.add_argument("--pairs", type=int, default=0, help="A/B pairs per size (default: 9, 5, 3 by size)")
    ap.add_argument("--startup-runs", type=int, default=21)
    ap.add_argument("--tmp", default=tempfile.gettempdir(), help="where the generated logs go")
    ap.add_argument("--json", action="store_true", help="print the figures as JSON")
    ap.add_argument("--no-compile", action="store_true",
                    help="leave crashlens's bytecode as it is (see compile_bytecode)")
    a = ap.parse_args()
    note = None if a.no_compile else compile_bytecode()
    if note and not a.json:
        print(note, flush=True)
    rows = []
    for label, shape in [(x, y) for x in a.sizes.split(",") for y in a.shapes.split(",")]:
        size = gen_log.parse_size(label)
        pairs = a.pairs or (9 if size <= 20 << 20 else 5 if size <= 200 << 20 else 3)
        rows.append(bench_size(label, size, pairs, a.tmp, shape))
        r = rows[-1]
        if not a.json:
            print(f"{r['size']:>5} {r['shape']:<8}  ratio {r['ratio']:6.2f}x ({r['ratio_min']:.2f}-{r['ratio_max']:.2f})  "
                  f"crashlens {r['crashlens_s']:7.2f}s  grep {r['grep_s']:6.3f}s  "
                  f"CPU ratio {r['cpu_ratio']:5.2f}x ({r['crashlens_cpu_s']:.2f}s / {r['grep_cpu_s']:.3f}s)  "
                  f"found {r['found']}/{r['of']}  peak RSS {r['peak_rss_mb']:5.1f} MB  ({r['pairs']} pairs, "
                  f"load {r['load'][0]:.1f}-{r['load'][1]:.1f})", flush=True)
            for p in r["problems"]:  # type: ignore[attr-defined]
                print(f"       {p}")
    st = startup(a.startup_runs)
    if a.json:
        print(json.dumps({"sizes": rows, "startup_ms": st, "cores": os.cpu_count()}, indent=2))
    else:
        for name, (median, best) in st.items():
            print(f"start-up  {name:<16} {median:6.0f} ms median, {best:4.0f} ms best of {a.startup_runs}")
    return 0 if all(r["found"] == r["of"] and not r["problems"] for r in rows) else 1


if __name__ == "__main__":
    sys.exit(main())
