"""Big logs: the chunked fast path gives exactly what the per-line path gives, and finds every buried crash.

Timing lives in benchmarks/bench_scan.py; this is only its correctness part.
"""

from __future__ import annotations

import importlib.util
import io
import random
import sys
from pathlib import Path

import pytest
from conftest import CORPUS, ROOT, SAMPLES
from hypothesis import given, settings
from hypothesis import strategies as st

from crashlens import read
from crashlens.catalog import get_catalog
from crashlens.cli.scan import run_scan
from crashlens.frame import frame_line
from crashlens.pipeline import SourceSession, combine, scan_chunks, scan_lines
from crashlens.prefilter import Prefilter, zero_digits
from crashlens.read import iter_line_chunks, iter_lines
from crashlens.render.json import render


def _gen_log():
    spec = importlib.util.spec_from_file_location("gen_log", ROOT / "benchmarks" / "gen_log.py")
    assert spec is not None and spec.loader is not None
    mod = importlib.util.module_from_spec(spec)
    sys.modules["gen_log"] = mod
    spec.loader.exec_module(mod)
    return mod


def _logs() -> list[Path]:
    logs = sorted(SAMPLES.glob("*.log")) + sorted((SAMPLES / "raw").glob("*.log"))
    if CORPUS.is_dir():
        logs += sorted(CORPUS.glob("*.log"))
    return logs


def _both(data: bytes, chunk: int = 1 << 20) -> tuple[str, str]:
    """The JSON documents of the per-line path and of the fast path for one log."""
    cat = get_catalog([])
    n1, d1 = scan_lines("log", iter_lines(io.BytesIO(data)), cat)
    n2, d2 = scan_chunks("log", iter_line_chunks(io.BytesIO(data), chunk), cat,
                         replay=lambda: iter_line_chunks(io.BytesIO(data), chunk))
    return render(combine([("log", n1, d1)])), render(combine([("log", n2, d2)]))


@pytest.mark.parametrize("path", _logs(), ids=lambda p: p.name)
def test_fast_path_equals_per_line_path_on_recorded_logs(path: Path) -> None:
    slow, fast = _both(path.read_bytes())
    assert fast == slow


@pytest.mark.parametrize("path", _logs(), ids=lambda p: p.name)
def test_fast_path_equals_per_line_path_in_tiny_chunks(path: Path) -> None:
    # Records, routing hints and skipped runs crossing chunk boundaries everywhere.
    slow, fast = _both(path.read_bytes(), chunk=97)
    assert fast == slow


def test_every_line_that_starts_a_record_or_gives_a_fact_is_kept() -> None:
    """The prefilter's markers against the pipeline itself, on every line ever recorded."""
    cat = get_catalog([])
    pf = Prefilter(cat)
    missed = []
    for path in _logs():
        for raw in read.iter_raw_lines(io.BytesIO(path.read_bytes())):
            s = SourceSession("log", cat)
            done = s.feed(read.decode_line(raw))
            assert s.facts is not None
            # A fact read from a line's SGLang prefix (server=sglang) needs only one such line: the fast
            # path feeds the last prefixed line before anything it keeps, so it is not a marker here.
            text_facts = set(s.facts.facts.values) - s.facts.facts.from_prefix
            if done or s.extractor.active_streams() or text_facts:
                line = raw[:-1] if raw.endswith(b"\n") else raw
                if pf.chunk(line + b"\n")[2] != [0]:
                    missed.append(raw)
    assert missed == []


def test_frame_treats_all_digits_alike() -> None:
    """The prefilter routes a line by its shape (digits zeroed); frame.py must not care which digit."""
    for path in _logs():
        for i, text in enumerate(iter_lines(io.BytesIO(path.read_bytes())), 1):
            a = frame_line("log", i, text)
            b = frame_line("log", i, zero_digits(text))
            assert (b.rank, b.prefixed) == (a.rank and zero_digits(a.rank), a.prefixed), text


@pytest.mark.parametrize("color", ["", "\x1b[32m"], ids=["plain", "colored"])
def test_records_open_at_the_end_finish_in_the_per_line_order(color: str) -> None:
    """Two workers die of the same crash at the very end; the worker seen first in the log is finished
    first, so its occurrence comes first (in the per-line path, a stream's age decides)."""
    g = _gen_log()
    rng = random.Random(1)
    traffic = g.traffic(rng)
    crash = g.sample_lines(g.sample_paths()[0])
    pair = g.crash_block(g.Crash("a", "workers", 2), crash, (5, crash), "2025-06-01 09:00:00")
    pair = pair[: pair.index(g.vllm_tag(2))]  # cut before the workers' shutdown lines
    lines = [*g.HEADER, f"{color}{g.vllm_tag(5)}INFO 06-01 08:00:00 [worker.py:1] Worker ready",
             *(next(traffic) for _ in range(3000)), *pair]
    slow, fast = _both(("\n".join(lines) + "\n").encode(), chunk=4096)
    assert fast == slow


@settings(max_examples=200, deadline=None)
@given(st.lists(st.sampled_from([b"a", b"Traceback", b"\n", b"\r", b"\r\n", b"\x00", b"\x1b[0m", b" ", b"x" * 7]),
                max_size=60), st.integers(min_value=1, max_value=40))
def test_chunks_hold_the_same_lines_as_iter_lines(parts, size) -> None:
    data = b"".join(parts)
    with pytest.MonkeyPatch.context() as mp:
        # Over-long lines are cut at MAX_LINE_BYTES: small enough here for the inputs to hit it.
        mp.setattr(read, "MAX_LINE_BYTES", 16)
        want = list(iter_lines(io.BytesIO(data)))
        got = [read.decode_physical(line) for c in iter_line_chunks(io.BytesIO(data), size)
               for line in c.split(b"\n")[:-1]]
    assert got == want


@pytest.fixture(scope="module")
def big_log(tmp_path_factory):
    g = _gen_log()
    if len(g.sample_paths()) < 2:
        pytest.skip("fewer than two recorded samples in samples/raw")
    path = tmp_path_factory.mktemp("scale") / "sglang-10m.log"
    crashes = g.generate(path, 10 << 20)
    return g, path, crashes


def test_twenty_buried_crashes_are_found_as_they_are_alone(big_log) -> None:
    g, path, crashes = big_log
    assert len(crashes) == 20
    from crashlens.render.json import document

    found, problems = g.verify(crashes, document(run_scan((str(path),), (), audit=False)))
    assert problems == []
    assert found == 20


def test_big_log_fast_path_equals_per_line_path(big_log) -> None:
    _, path, _ = big_log
    slow, fast = _both(path.read_bytes())
    assert fast == slow


def test_several_files_in_parallel_equal_a_serial_run() -> None:
    logs = [str(p) for p in _logs()[:12]]
    if len(logs) < 2:
        pytest.skip("no recorded samples")
    serial = render(run_scan(tuple(logs), (), audit=False, jobs=1))
    assert render(run_scan(tuple(logs), (), audit=False, jobs=2)) == serial
