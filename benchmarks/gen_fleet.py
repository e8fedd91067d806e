#!/usr/bin/env python3
"""Generate a fleet of server logs with recorded crashes buried in traffic, and what `mine` must find.

    python benchmarks/gen_fleet.py /tmp/fleet --files 10000 --size 500K

Each log is SGLang-style traffic from 8 ranks (gen_log.traffic) after a start-up header, with 0 to
`--crashes` crashes buried in it, taken verbatim from the recorded samples (samples/raw/*.log, as
gen_log.py buries them: a traceback the way SGLang's scheduler logs it, with a rank and a timestamp;
a recording that starts with warnings as the process printed it), each followed by a restart. A log
holds a sample at most once (a crash does not happen twice in one server's life without a restart
round). Every seventh log is gzipped. Each log has its own random stream (seed and number), so a fleet
is the same however many processes write it. The manifest (`<dir>/fleet.json`) gives, for each diagnosis id,
how many times it was buried: the counts `crashlens mine --all` must give. Deterministic for a seed.
"""

from __future__ import annotations

import argparse
import gzip
import json
import os
import random
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
import gen_log


def alone(sample: Path) -> list[str]:
    """The groups `crashlens mine --all` finds in a recording on its own (after the start-up header)."""
    import tempfile

    from crashlens.mine import mine_file

    with tempfile.TemporaryDirectory() as tmp:
        p = os.path.join(tmp, "alone.log")
        Path(p).write_text("\n".join(gen_log.HEADER + gen_log.sample_lines(sample)) + "\n")
        return [g.id for g in mine_file(p, 0).groups]


def _choose(rng: random.Random, crashes: int, paths: list[str]) -> list[str]:
    k = rng.randrange(crashes + 1)
    return rng.sample(paths, k) if k else []


def expected_counts(files: int, crashes: int = 3, seed: int = 0) -> dict[str, int]:
    """The counts a fleet must give, from the samples each log holds (drawn again, nothing read) and
    what mine finds in each sample alone today."""
    paths = [str(p) for p in gen_log.sample_paths()]
    ids = {p: alone(Path(p)) for p in paths}
    out: dict[str, int] = {}
    for f in range(files):
        for p in _choose(random.Random(f"{seed}-{f}"), crashes, paths):
            for i in ids[p]:
                out[i] = out.get(i, 0) + 1
    return out


def _write_one(args: tuple[str, int, int, int, int, list[str]]) -> tuple[list[str], int]:
    """Log number f of the fleet (its own random stream, so a fleet is the same however it is made);
    the samples buried in it."""
    out, f, size, crashes, seed, paths = args
    rng = random.Random(f"{seed}-{f}")
    chosen = _choose(rng, crashes, paths)
    traffic = gen_log.traffic(rng)
    lines: list[str] = list(gen_log.HEADER)
    written = sum(len(x) + 1 for x in lines)
    marks = sorted(rng.randrange(size) for _ in chosen)
    for n, p in enumerate(chosen):
        while written < marks[n]:
            ln = next(traffic)
            lines.append(ln)
            written += len(ln) + 1
        text = gen_log.sample_lines(Path(p))
        style = "scheduler" if text[0].startswith("Traceback") else "verbatim"
        c = gen_log.Crash(p, style, rng.randrange(gen_log.RANKS))
        block = gen_log.crash_block(c, text, None, gen_log._ts(8 * 3600 + 60 * f + n))
        lines += block
        written += sum(len(x) + 1 for x in block)
    while written < size:
        ln = next(traffic)
        lines.append(ln)
        written += len(ln) + 1
    data = ("\n".join(lines) + "\n").encode()
    sub = os.path.join(out, f"node{f % 16:02d}")
    os.makedirs(sub, exist_ok=True)
    name = os.path.join(sub, f"server-{f:05d}.log")
    if f % 7 == 6:
        with gzip.open(name + ".gz", "wb", compresslevel=1) as fh:
            fh.write(data)
    else:
        with open(name, "wb") as fh:
            fh.write(data)
    return chosen, len(data)


def fleet(out: str, files: int, size: int, crashes: int = 3, seed: int = 0, jobs: int = 1) -> dict[str, object]:
    """Write the fleet under `out`; its manifest (also written to fleet.json)."""
    paths = [str(p) for p in gen_log.sample_paths()]
    ids = {p: alone(Path(p)) for p in paths}
    os.makedirs(out, exist_ok=True)
    work = [(out, f, size, crashes, seed, paths) for f in range(files)]
    if jobs > 1:
        import multiprocessing

        with multiprocessing.get_context("fork").Pool(jobs) as pool:
            results = pool.map(_write_one, work, chunksize=16)
    else:
        results = [_write_one(w) for w in work]
    expected: dict[str, int] = {}
    buried = 0
    for chosen, _ in results:
        for p in chosen:
            buried += 1
            for i in ids[p]:
                expected[i] = expected.get(i, 0) + 1
    doc = {"files": files, "size": size, "seed": seed, "crashes": crashes, "buried": buried,
           "text_bytes": sum(n for _, n in results),
           "expected": expected}
    Path(out, "fleet.json").write_text(json.dumps(doc, indent=1))
    return doc


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("out")
    ap.add_argument("--files", type=int, default=100)
    ap.add_argument("--size", default="500K", help="bytes of log per file, e.g. 500K")
    ap.add_argument("--crashes", type=int, default=3, help="at most this many crashes per file")
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("-j", "--jobs", type=int, default=os.cpu_count() or 1, help="processes writing logs")
    a = ap.parse_args()
    doc = fleet(a.out, a.files, gen_log.parse_size(a.size), a.crashes, a.seed, a.jobs)
    print(f"{doc['files']} files, {doc['buried']} crashes buried, {len(doc['expected'])} distinct")  # type: ignore[arg-type]
    return 0


if __name__ == "__main__":
    sys.exit(main())
