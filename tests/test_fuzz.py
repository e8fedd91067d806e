"""Fuzzing the whole pipeline (bytes -> lines -> records -> diagnoses -> renderers): no exception escapes,
memory stays bounded and every run finishes, whatever a crashing server printed."""

from __future__ import annotations

import io
import json
import random
import time
import tracemalloc
from pathlib import Path

import pytest
from conftest import CORPUS, SAMPLES
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from crashlens.catalog import get_catalog
from crashlens.pipeline import ScanResult, SourceSession, combine, scan_lines
from crashlens.read import MAX_LINE_BYTES, iter_lines
from crashlens.render.json import render as render_json
from crashlens.render.json import render_line
from crashlens.render.terminal import render as render_terminal

CAT = get_catalog()
FUZZ = settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])


def _catalog_fragments() -> list[bytes]:
    """The catalog's real log fragments: always present, whatever samples are recorded yet."""
    return [e.text.encode() for s in CAT.signatures for e in s.examples][:40]


def _real_logs() -> list[bytes]:
    """Real recordings: samples/raw/*.log, samples/*.log and ../shared/corpus/dev/*.log where present."""
    paths = [*sorted((SAMPLES / "raw").glob("*.log")), *sorted(SAMPLES.glob("*.log")), *sorted(CORPUS.glob("*.log"))]
    out = []
    for p in paths[:40]:
        data = p.read_bytes()
        out.append(data[: 256 * 1024])  # keep each example fast; truncation is itself one of the mutations
    return out


SEEDS = _real_logs() + _catalog_fragments()
FRAGMENT = next(e.text for e in CAT.get("subprocess-thread-lock").examples if e.expect_match).encode()  # type: ignore[union-attr]


def run_pipeline(data: bytes | io.BufferedIOBase, name: str = "fuzz.log") -> ScanResult:
    """What `crashlens scan` does, renderers included, on bytes."""
    fh = io.BytesIO(data) if isinstance(data, bytes) else data
    n, diags = scan_lines(name, iter_lines(fh), CAT)
    result = combine([(name, n, diags)])
    json.loads(render_json(result))
    for d in result.diagnoses:
        json.loads(render_line(d))
    out = io.StringIO()
    render_terminal(result, out, color=True, width=100)
    assert "\x1b]" not in out.getvalue()
    return result


# -- Hypothesis properties ------------------------------------------------------------------------------------


@FUZZ
@given(st.binary(max_size=4096))
def test_random_bytes(data):
    run_pipeline(data)


_NOISE = st.sampled_from([b"\x00", b"\r", b"\r\n", b"\n", b"\x1b[31m", b"\x1b]8;;x\x07", b"\xff\xfe", b"\xc3",
                          b"\xe2\x80\xae", b"[rank3]:", b"[2025-11-30 11:18:05 TP1] ", b"(Worker_TP0 pid=7) ",
                          b"Traceback (most recent call last):\n", b"\nThe above exception was the direct cause "
                          b"of the following exception:\n\n", b"from user code:\n", b'  File "', b"    ",
                          b"torch._dynamo.exc.Unsupported: ", "é€😀".encode(), "é".encode("latin-1"),
                          "ü".encode("utf-16-le")])


@st.composite
def mutated_sample(draw):
    data = bytearray(draw(st.sampled_from(SEEDS)))
    start = draw(st.integers(0, max(0, len(data) - 1)))
    end = draw(st.integers(start, len(data)))
    data = data[start:end] if draw(st.booleans()) else data[:end]  # truncated at one or both ends
    for _ in range(draw(st.integers(0, 12))):
        op = draw(st.sampled_from(["insert", "flip", "delete", "dup-line", "splice"]))
        pos = draw(st.integers(0, len(data)))
        if op == "insert":
            data[pos:pos] = draw(_NOISE)
        elif op == "flip" and data:
            data[min(pos, len(data) - 1)] = draw(st.integers(0, 255))
        elif op == "delete":
            del data[pos : pos + draw(st.integers(1, 200))]
        elif op == "dup-line":
            line_end = data.find(b"\n", pos)
            chunk = data[pos : line_end + 1 if line_end >= 0 else len(data)]
            data[pos:pos] = chunk * draw(st.integers(1, 20))
        else:
            other = draw(st.sampled_from(SEEDS))
            cut = draw(st.integers(0, len(other)))
            data[pos:pos] = other[cut : cut + draw(st.integers(0, 4000))]
    return bytes(data)


@FUZZ
@given(mutated_sample())
def test_truncated_and_mutated_real_samples(data):
    run_pipeline(data)


@FUZZ
@given(mutated_sample(), st.randoms(use_true_random=False))
def test_incremental_feeding_with_idle_flushes(data, rnd):
    """Watch mode: the same session fed line by line, with streams flushed at random quiet moments."""
    s = SourceSession("watch.log", CAT)
    out = []
    for line in iter_lines(io.BytesIO(data)):
        out.extend(s.feed(line))
        if rnd.random() < 0.1:
            for key in list(s.extractor.active_streams()):
                out.extend(s.flush_stream(key))
    out.extend(s.finish())
    s.final_diagnoses(out)


@FUZZ
@given(st.lists(st.sampled_from(SEEDS + [FRAGMENT]), min_size=1, max_size=4),
       st.sampled_from(["utf-8", "latin-1", "cp1252", "utf-16-le", "utf-16", "shift_jis"]), st.randoms())
def test_mixed_encodings(parts, encoding, rnd):
    """Lines re-encoded one by one in another encoding, as when processes with different locales share a log."""
    lines = b"".join(parts).decode("utf-8", "replace").splitlines(keepends=True)
    out = []
    for line in lines:
        if rnd.random() < 0.3:
            out.append(line.encode(encoding, "replace"))
        else:
            out.append(line.encode("utf-8"))
    run_pipeline(b"".join(out))


@FUZZ
@given(st.integers(1, 5), st.sampled_from([b"\x00", b"\x00\x00\x00", b"\r", b"\x1b[0m"]))
def test_nul_and_noise_between_every_byte_change_nothing(step, noise):
    """NULs and colour resets interleaved everywhere are dropped: the diagnosis is the one of the clean log."""
    clean = run_pipeline(FRAGMENT)
    noisy = bytearray()
    for i in range(0, len(FRAGMENT), step):
        noisy += FRAGMENT[i : i + step] + (noise if noise != b"\r" and FRAGMENT[i : i + step][-1:] != b"\n" else b"")
    result = run_pipeline(bytes(noisy))
    if noise in (b"\x00", b"\x00\x00\x00"):
        assert [d.id for d in result.diagnoses] == [d.id for d in clean.diagnoses]


# -- sizes: long lines, many lines, deep chains ------------------------------------------------------------------


class _Lazy(io.RawIOBase):
    """prefix + `unit` repeated up to `size` bytes + suffix, generated on demand: a 50 MB line never exists."""

    def __init__(self, prefix: bytes, unit: bytes, size: int, suffix: bytes) -> None:
        block = unit * max(1, (1 << 20) // len(unit))
        self._chunks = [prefix, *([block] * (size // len(block))), suffix]
        self._i = 0
        self._off = 0

    def readable(self) -> bool:
        return True

    def readinto(self, b) -> int:  # type: ignore[no-untyped-def]
        n = 0
        while n < len(b) and self._i < len(self._chunks):
            chunk = self._chunks[self._i]
            take = min(len(chunk) - self._off, len(b) - n)
            b[n : n + take] = chunk[self._off : self._off + take]
            n += take
            self._off += take
            if self._off == len(chunk):
                self._i += 1
                self._off = 0
        return n


@pytest.mark.parametrize("unit", [b"A", b'  File "/srv/a.py", line 1, in f ', b"Unsupported: ((((\x00\x1b[",
                                  "é😀".encode()])
def test_50mb_single_line_uses_bounded_memory(unit):
    fh = io.BufferedReader(_Lazy(b"", unit, 50 * 1024 * 1024, b"\n" + FRAGMENT))
    tracemalloc.start()
    try:
        t0 = time.monotonic()
        result = run_pipeline(fh)  # type: ignore[arg-type]
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    assert peak < 16 * MAX_LINE_BYTES + 8 * 1024 * 1024, peak
    assert time.monotonic() - t0 < 30
    # The crash after the monster line is still found.
    assert [d.signature for d in result.diagnoses] == ["subprocess-thread-lock"]


def test_a_million_short_lines_finish():
    data = b"".join(b"INFO step %d ok\n" % (i % 97) for i in range(1_000_000))
    t0 = time.monotonic()
    result = run_pipeline(data + FRAGMENT)
    assert result.total_lines == 1_000_000 + FRAGMENT.count(b"\n") + (not FRAGMENT.endswith(b"\n"))
    assert result.diagnoses
    assert time.monotonic() - t0 < 45


def _chained(n: int, cause: bytes) -> bytes:
    block = (b"Traceback (most recent call last):\n"
             b'  File "/srv/app/model.py", line 12, in forward\n    return self.inner(x)\n')
    return cause.join([block + FRAGMENT] * n)


CAUSES = [
    b"\nThe above exception was the direct cause of the following exception:\n\n",
    b"\nDuring handling of the above exception, another exception occurred:\n\n",
]


@pytest.mark.parametrize("cause", CAUSES)
def test_thousands_of_chained_exceptions_finish(cause):
    t0 = time.monotonic()
    result = run_pipeline(_chained(1500, cause))
    assert time.monotonic() - t0 < 30
    assert result.diagnoses


def test_chained_exceptions_memory_grows_no_faster_than_the_log():
    peaks = []
    for n in (50, 200):
        data = _chained(n, CAUSES[0])
        tracemalloc.start()
        try:
            run_pipeline(data)
            peaks.append(tracemalloc.get_traced_memory()[1])
        finally:
            tracemalloc.stop()
    assert peaks[1] < 4 * peaks[0] * 1.5 + 2 * 1024 * 1024, peaks


def test_one_traceback_with_a_hundred_thousand_frames():
    frames = b'  File "/srv/app/model.py", line 3, in f\n    return f(x)\n' * 100_000
    data = b"Traceback (most recent call last):\n" + frames + b"RecursionError: maximum recursion depth exceeded\n"
    t0 = time.monotonic()
    run_pipeline(data + FRAGMENT)
    assert time.monotonic() - t0 < 30


def test_random_splices_of_every_seed_finish(tmp_path: Path):
    """A deterministic sweep: each seed cut at many points and re-joined out of order."""
    rnd = random.Random(7)
    for seed in SEEDS[:20]:
        cuts = sorted(rnd.randrange(len(seed) + 1) for _ in range(6))
        pieces = [seed[a:b] for a, b in zip([0, *cuts], [*cuts, len(seed)])]
        rnd.shuffle(pieces)
        run_pipeline(b"".join(pieces))


def test_start_up_fact_lines_waiting_for_a_diagnosis_stay_bounded():
    """Lines holding a fact trigger are noted until a diagnosis needs the facts; thousands of long
    ones (64 KiB lines full of `torch`) must not all be held."""
    import tracemalloc

    from crashlens.catalog import get_catalog
    from crashlens.pipeline import scan_lines

    cat = get_catalog([])
    body = "torch " * 10_000  # 60 KB, a trigger, no fact
    tracemalloc.start()
    try:
        # 36 MB of such lines, each its own string
        n, diags = scan_lines("log", (f"{i} {body}" for i in range(600)), cat)
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    assert n == 600 and diags == []
    assert peak < 16 << 20, f"peak {peak >> 20} MB"
