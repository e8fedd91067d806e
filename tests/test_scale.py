"""Big logs: the chunked fast path gives exactly what the per-line path gives, and finds every buried crash.

Timing lives in benchmarks/bench_scan.py; this is only its correctness part.
"""

from __future__ import annotations

import importlib.util
import itertools
import json
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
from crashlens.locate import Locator
from crashlens.pipeline import SourceSession, combine, scan_chunks, scan_lines, scan_located
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


NATIVE = Locator.create([b"Traceback"]) is not None


def _both(data: bytes, chunk: int = 1 << 20) -> tuple[str, str]:
    """The JSON documents of the per-line path and of the fast path (native where built) for one log."""
    got = _every_path(data, chunk)
    return got["lines"], got["native" if NATIVE else "shapes"]


def _every_path(data: bytes, chunk: int = 1 << 20) -> dict[str, str]:
    """The JSON document of each way a log can be read: line by line, chunks judged by shape, chunks
    located natively, and a file read in byte ranges by the locator's workers (where built)."""
    import os
    import tempfile

    cat = get_catalog([])

    def replay():
        return iter_line_chunks(io.BytesIO(data), chunk)

    def doc(n, d):
        return render(combine([("log", n, d)]))

    out = {"lines": doc(*scan_lines("log", iter_lines(io.BytesIO(data)), cat)),
           "shapes": doc(*scan_chunks("log", replay(), cat, replay=replay, native=False))}
    if NATIVE:
        out["native"] = doc(*scan_chunks("log", replay(), cat, replay=replay))
        with tempfile.TemporaryDirectory() as tmp:
            path = os.path.join(tmp, "log")
            with open(path, "wb") as fh:
                fh.write(data)
            fd = os.open(path, os.O_RDONLY)
            try:
                for name, locator in _locators(cat).items():
                    read = locator.read_file(fd, len(data), chunk)
                    out[f"file, {name}"] = doc(*scan_located("log", read, cat, replay=replay, locator=locator))
            finally:
                os.close(fd)
    return out


def _locators(cat) -> dict[str, Locator]:
    """Both native locators, whichever this machine would pick: the one-pass Finder (AVX2 or its
    portable loop) and the two-pass one (ahocorasick_rs, then lines_of_interest)."""
    markers = Prefilter(cat).markers
    found = {name: Locator.create(markers, fused=fused) for name, fused in (("one pass", True), ("two passes", False))}
    found["one pass, ranges read in Python"] = python_reads = Locator.create(markers, fused=True)
    if python_reads is not None:
        python_reads.read_range = None  # type: ignore[attr-defined]  # (see Locator._range)
    return {name: loc for name, loc in found.items() if loc is not None}


def _all_equal(got: dict[str, str]) -> None:
    for way, text in got.items():
        assert text == got["lines"], f"{way} differs from the per-line path"


@pytest.mark.parametrize("path", _logs(), ids=lambda p: p.name)
def test_fast_paths_equal_per_line_path_on_recorded_logs(path: Path) -> None:
    _all_equal(_every_path(path.read_bytes()))


@pytest.mark.parametrize("path", _logs(), ids=lambda p: p.name)
def test_fast_paths_equal_per_line_path_in_tiny_chunks(path: Path) -> None:
    # Records, routing hints and skipped runs crossing chunk boundaries everywhere; lines longer than
    # eight chunks take the locator's bounded-memory path.
    _all_equal(_every_path(path.read_bytes(), chunk=97))


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


# benchmarks/gen_log.py's filler shapes and the size of the log each is tested on here: traffic (the
# benchmark's first shape), a start-up restart loop and torch warnings (lines that name torch,
# FlashInfer and SGLang, round after round).
SHAPES = {"traffic": 10 << 20, "startup": 3 << 20, "warnings": 3 << 20}


@pytest.fixture(scope="module", params=sorted(SHAPES))
def big_log(request, tmp_path_factory):
    g = _gen_log()
    if len(g.sample_paths()) < 2:
        pytest.skip("fewer than two recorded samples in samples/raw")
    path = tmp_path_factory.mktemp("scale") / f"sglang-{request.param}.log"
    crashes = g.generate(path, SHAPES[request.param], shape=request.param)
    return g, path, crashes


def test_twenty_buried_crashes_are_found_as_they_are_alone(big_log) -> None:
    g, path, crashes = big_log
    assert len(crashes) == 20
    from crashlens.render.json import document

    found, problems = g.verify(crashes, document(run_scan((str(path),), (), audit=False)))
    assert problems == []
    assert found == 20


def test_big_log_fast_paths_equal_per_line_path(big_log) -> None:
    _, path, _ = big_log
    _all_equal(_every_path(path.read_bytes(), chunk=256 << 10))


def test_several_files_in_parallel_equal_a_serial_run() -> None:
    logs = [str(p) for p in _logs()[:12]]
    if len(logs) < 2:
        pytest.skip("no recorded samples")
    serial = render(run_scan(tuple(logs), (), audit=False, jobs=1))
    assert render(run_scan(tuple(logs), (), audit=False, jobs=2)) == serial


def test_native_parts_are_built_where_a_compiler_is() -> None:
    """`pip install .` builds crashlens._lines where a C compiler exists; a silent build failure would
    leave every big scan on the slow path."""
    import shutil
    import sysconfig

    if not (shutil.which("cc") or shutil.which("gcc") or shutil.which("clang")) or sysconfig.get_platform().startswith("win"):
        pytest.skip("no C compiler here: the pure-Python path is the one in use")
    assert NATIVE, "crashlens._lines is missing: scans of big logs take the slow path"
    from crashlens import _lines  # type: ignore[attr-defined]

    try:
        flags = Path("/proc/cpuinfo").read_text()
    except OSError:
        return
    if " avx2" in flags:  # the one-pass loop must be the one in use where the CPU can run it
        assert _lines.HAVE_AVX2 and _lines.PATHS[-1] == "portable" and len(_lines.PATHS) >= 2


def _joined(path: Path) -> list[str]:
    return [ln for ln in path.read_text(encoding="utf-8", errors="replace").splitlines()
            if not ln.startswith("# crashlens sample:")]


@pytest.mark.parametrize("path", sorted((SAMPLES / "raw").glob("*.log"))[:16], ids=lambda p: p.name)
def test_fast_paths_equal_per_line_path_on_pastes_that_lost_their_newlines(path: Path) -> None:
    """A recorded crash pasted on one line, bare and behind an SGLang prefix: the fast path must keep
    the line because a line inside it starts a record. The recompile warning before it (recorded) gives
    the one fact a frame line could give, so the line matters for no other reason."""
    lines = _joined(path)
    guard = "\n".join(_joined(SAMPLES / "raw" / "recompile-limit.log")[:6]) + "\n"
    data = (guard + "worker ready\n" * 200 + " ".join(lines) + "\nheartbeat ok\n"
            + "[2026-05-18 20:47:47 TP0] Scheduler hit an exception: " + " ".join(lines) + "\ndone\n").encode()
    got = _every_path(data, chunk=1024)  # the fact is known (its marker retired) before the paste's chunk
    assert json.loads(got["lines"])["diagnoses"]
    _all_equal(got)


@pytest.mark.parametrize("data", [
    b"", b"no newline at the end", b"a\r\nb\r\nTraceback (most recent call last):\r\n",
    b"\x00\x00\x00[2025 TP0] Traceback (most recent call last):\n" * 3,
    b"ok\n" + b"x" * 5000 + b" File \"a.py\", line 1, in f\n" + b"tail\n",
    b"\x1b[31mTrace\x1b[0mback (most recent call last):\n  File \"x.py\", line 3, in f\n    f()\nValueError: boom\n",
    b"plain output\n" * 300 + b"torch._dynamo.exc.Unsupported: boom\n",
])
def test_fast_paths_equal_per_line_path_on_edge_cases(data: bytes) -> None:
    """Empty and unterminated files, CRLF, NUL padding, a line far longer than a chunk, a marker split
    by colour codes, and an unprefixed log (the route hint is looked for over many lines)."""
    for chunk in (7, 64, 1 << 20):
        _all_equal(_every_path(data, chunk))


@pytest.mark.skipif(not NATIVE, reason="crashlens._lines is not built here")
@settings(max_examples=300, deadline=None)
@given(st.lists(st.sampled_from([b"a", b".", b"A", b"_", b"\n", b"\r", b"\t", b"\x00", b"\x1b", b"\x7f", b" ",
                                 b"x" * 70, b".B", b"._C", b"Traceback", b"\xc3\xa9"]), max_size=120),
       st.data())
def test_native_line_finder_equals_the_python_rules(parts, data) -> None:
    """crashlens._lines against the rules it implements (prefilter._CONTROLS, DOTTED_NAME, offsets)."""
    from crashlens import _lines  # type: ignore[attr-defined]
    from crashlens.prefilter import _CONTROLS, DOTTED_NAME

    chunk = b"".join(parts)
    offsets = sorted(data.draw(st.sets(st.integers(0, max(len(chunk) - 1, 0)), max_size=5))) if chunk else []
    n, indices, starts = _lines.lines_of_interest(chunk, offsets)
    # The portable loop (chosen where the CPU lacks AVX2) gives the same, here as anywhere.
    assert _lines.lines_of_interest(chunk, offsets, True) == (n, indices, starts)
    assert n == chunk.count(b"\n")
    want, start = [], 0
    for i, line in enumerate(chunk.split(b"\n")):
        end = start + len(line)
        hit = any(c in _CONTROLS for c in line) or DOTTED_NAME.search(line) is not None
        hit = hit or any(start <= o <= end for o in offsets) and any(start <= o < end + 1 for o in offsets)
        if hit and (i < n or line):
            want.append((i, start))
        start = end + 1
    assert list(zip(indices, starts)) == want


def test_marker_anchors_find_every_line_a_marker_finds() -> None:
    from crashlens.prefilter import anchor

    cat = get_catalog([])
    pf = Prefilter(cat)
    from crashlens.traceback import RECORD_START_MARKERS

    from crashlens.literals import covering_literals

    facts = [c.encode() for r in cat.facts for c in (covering_literals(r.pattern.source) or (r.trigger,))]
    for m in (*RECORD_START_MARKERS, *facts):
        assert any(a in m for a in pf.markers), m
        assert anchor(m) in m


def test_no_anchor_starts_with_the_commonest_bytes_of_a_log_where_a_rarer_part_would_do() -> None:
    """The native filter tests each anchor's first bytes at every position of the log: an anchor that
    starts with `: ` (in most lines of a server log) or a lowercase letter lets most positions through
    to the byte-for-byte check, which doubled the pass over a 300 MB log."""
    from crashlens.prefilter import anchor

    assert anchor(b": [ERROR]") == b"[ERROR]"
    assert anchor(b"server_args=") == b"_args="
    assert anchor(b": v2.") == b": v2."  # no rarer part of five bytes: the literal itself
    for m in Prefilter(get_catalog([])).markers:
        rarer = [m[i:] for i in range(1, len(m) - 4) if not (m[i:i + 1].islower() or m[i] in b" :-/.")]
        assert not (m[:1].islower() or m[:2] == b": ") or not rarer, m


@pytest.mark.skipif(not NATIVE, reason="crashlens._lines is not built here")
@pytest.mark.parametrize("python_reads", [True, False], ids=["python reads", "native reads"])
def test_a_file_of_one_huge_line_is_read_about_once(tmp_path, monkeypatch, python_reads) -> None:
    """Each byte range looks for its first line start only inside itself: a 4 MB line without a newline,
    cut into 64 ranges, must not be scanned to its end once per range (that was ~30,000 reads). (The
    reads counted are Python's: Finder.read_range probes the same way in C, where they are not seen.)"""
    import os

    from crashlens import locate

    data = b"x" * (4 << 20) + b"\n" + b"Traceback (most recent call last):\n  File \"a.py\", line 1, in f\nValueError: v\n"
    path = tmp_path / "one-line.log"
    path.write_bytes(data)
    reads = [0]
    real_pread, real_preadv = os.pread, getattr(os, "preadv", None)

    def pread(fd, n, at):
        reads[0] += 1
        return real_pread(fd, n, at)

    monkeypatch.setattr(locate.os, "pread", pread)
    if real_preadv is not None:
        def preadv(fd, bufs, at):
            reads[0] += 1
            return real_preadv(fd, bufs, at)

        monkeypatch.setattr(locate.os, "preadv", preadv)
    cat = get_catalog([])
    locator = Locator.create(Prefilter(cat).markers)
    if python_reads:
        locator.read_range = None
    fd = os.open(path, os.O_RDONLY)
    try:
        n, diags = scan_located("log", locator.read_file(fd, len(data), 64 << 10), cat)
    finally:
        os.close(fd)
    monkeypatch.undo()
    assert reads[0] < 2_000, reads[0]
    _, want = scan_lines("log", iter_lines(io.BytesIO(data)), cat)
    assert n == data.count(b"\n") and render(combine([("log", n, diags)])) == render(combine([("log", n, want)]))


@pytest.mark.parametrize("native", [True, False], ids=["native", "shapes"])
@pytest.mark.parametrize("shape", ["startup", "warnings"])
def test_repeated_start_up_and_warning_lines_do_not_reach_the_per_line_pipeline(shape, native, monkeypatch) -> None:
    """A restart loop prints the same start-up lines (naming torch, FlashInfer, SGLang) round after
    round, and torch repeats its warnings: ten times as many of them must not feed the per-line
    pipeline a single line more (a fact once known needs no second look; a line that names torch
    but states no version gives none), and the crash after them is found as the per-line path finds it."""
    if native and not NATIVE:
        pytest.skip("crashlens._lines is not built here")
    g = _gen_log()
    crash = g.sample_lines(g.sample_paths()[0])
    cat = get_catalog([])
    fed: list[int] = []
    real_feed = SourceSession.feed

    def counting_feed(self, text):
        fed[-1] += 1
        return real_feed(self, text)

    docs = []
    for lines in (2_000, 20_000):
        filler = itertools.islice(g.SHAPES[shape](random.Random(3)), lines)
        data = ("\n".join([*g.HEADER, *filler, *crash]) + "\n").encode()
        fed.append(0)
        with monkeypatch.context() as mp:
            mp.setattr(SourceSession, "feed", counting_feed)
            n, diags = scan_chunks("log", iter_line_chunks(io.BytesIO(data), 64 << 10), cat, native=native)
        docs.append(render(combine([("log", n, diags)])))
        _, want = scan_lines("log", iter_lines(io.BytesIO(data)), cat)
        assert docs[-1] == render(combine([("log", n, want)]))
    # A start-up banner begins the next round only after a crash (rounds.py): the banners of launches
    # that did not crash are not looked at either, however many there are.
    banners = sum(1 for ln in itertools.islice(g.SHAPES[shape](random.Random(3)), 20_000)
                  if any(b.trigger in ln for b in cat.banners))
    assert shape != "startup" or banners > 100, banners  # the loop does restart, many times
    assert fed[1] == fed[0], (fed, banners)
    assert fed[1] < 2 * len(crash) + 200, fed  # the crash, and the first start-up lines before the facts are known


def test_whether_a_line_starts_a_record_does_not_depend_on_its_digits() -> None:
    """The prefilter judges a line by its shape (digits zeroed): a line whose markers are only record
    markers matters only if it starts a record, so that must not depend on which digits it holds."""
    from crashlens.prefilter import starts_record

    seen = 0
    for path in _logs():
        for i, text in enumerate(iter_lines(io.BytesIO(path.read_bytes())), 1):
            a = starts_record(frame_line("log", i, text))
            assert starts_record(frame_line("log", i, zero_digits(text))) == a, text
            seen += a
    assert seen > 100


@pytest.mark.skipif(not NATIVE, reason="crashlens._lines is not built here")
@settings(max_examples=300, deadline=None)
@given(st.lists(st.sampled_from([b"a", b"1", b"7", b"\n", b"\r", b"\x01", b" ", b"Error", b"x" * 9]), max_size=80),
       st.data())
def test_lines_of_a_known_shape_are_left_out(parts, data) -> None:
    """crashlens._lines.drop_known against its rule: a located line is left out when its shape (digits as
    0) has a known key, unless it holds a control character."""
    from array import array

    from crashlens import _lines  # type: ignore[attr-defined]
    from crashlens.prefilter import CONTROL_MARK, shape

    chunk = b"".join(parts)
    lines = chunk.split(b"\n")
    starts = [sum(len(x) + 1 for x in lines[:k]) for k in range(len(lines))]
    located = sorted(data.draw(st.sets(st.integers(0, len(lines) - 1))))
    known = data.draw(st.sets(st.sampled_from([lines[i] for i in located]))) if located else set()
    keys = array("Q", sorted({_lines.shape_key(x) for x in known})).tobytes()
    got = _lines.drop_known(chunk, located, [starts[i] for i in located], keys)
    want = [i for i in located if CONTROL_MARK in shape(lines[i]) or not any(shape(lines[i]) == shape(k) for k in known)]
    assert got == (want, [starts[i] for i in want])


@pytest.mark.skipif(not NATIVE, reason="crashlens._lines is not built here")
@settings(max_examples=300, deadline=None)
@given(st.lists(st.sampled_from([b"a", b"1", b"7", b"\n", b"\r", b"\x01", b"\x7f", b"\t", b" ", b"Error", b"x" * 9,
                                 b".X", b"y" * 70]), max_size=80), st.data())
def test_lines_left_out_or_set_aside_in_the_pass_are_those_drop_known_sorts_out(parts, data) -> None:
    """Finder.locate(known=, aside=) leaves out and sets apart in its one pass exactly the lines that
    drop_known sorts out of what it found, on every loop this machine has; and shape keys follow shapes:
    lines of one shape share a key (digits as 0), and a control character is seen wherever it lies."""
    from array import array

    from crashlens import _lines  # type: ignore[attr-defined]
    from crashlens.prefilter import CONTROL_MARK, shape

    chunk = b"".join(parts)
    finder = _lines.Finder([b"Error", b"yy"])
    n, found, starts = finder.locate(chunk)
    lines = chunk.split(b"\n")
    pick = st.sets(st.sampled_from(lines)) if lines else st.just(set())
    known, aside = data.draw(pick), data.draw(pick)
    kb = array("Q", sorted({_lines.shape_key(x) for x in known})).tobytes()
    ab = array("Q", sorted({_lines.shape_key(x) for x in aside})).tobytes()
    want = _lines.drop_known(chunk, found, starts, kb, ab)
    for path in _lines.PATHS:
        assert finder.locate(chunk, path=path, known=kb, aside=ab) == (n, *want)
    assert finder.locate(chunk, portable=True, known=kb, aside=ab) == (n, *want)
    for line in lines:
        twin = bytes(b if not 48 <= b <= 57 else 48 + (b * 7) % 10 for b in line)
        assert _lines.shape_key(twin) == _lines.shape_key(line)
        kept = _lines.drop_known(line + b"\n", [0], [0], array("Q", [_lines.shape_key(line)]).tobytes())
        assert kept == (([0], [0]) if CONTROL_MARK in shape(line) else ([], []))


def test_too_many_markers_give_way_to_fewer_broader_ones(monkeypatch) -> None:
    """The native locator takes at most MAX_MARKERS markers: past that, rules are looked for by their
    triggers instead of their covers, and every line a rule can set a fact from is still found."""
    from crashlens import prefilter
    from crashlens.literals import covering_literals

    cat = get_catalog([])
    full = len(Prefilter(cat).markers)
    limit = full - 4  # fewer than the covers need, more than the triggers and record markers take
    monkeypatch.setattr(prefilter, "MAX_MARKERS", limit)
    pf = Prefilter(cat)
    assert len(pf.markers) <= limit
    for r in cat.facts:
        cover = [c.encode() for c in covering_literals(r.pattern.source) or ()]
        assert all(any(a in c for a in pf.markers) for c in cover) or any(a in r.trigger.encode() for a in pf.markers)


def test_the_shipped_catalog_fits_the_native_locator() -> None:
    """Every fact rule of the shipped catalog is looked for by its covering literals, not by its broader
    trigger: with one marker more than the native locator took, the FlashInfer-version rule was looked
    for as `flashinfer`, and every line naming FlashInfer was fed to the pipeline while its fact was
    unknown (a start-up loop's `Use flashinfer backend`, 8 ranks a launch)."""
    from crashlens.catalog import covering_literals_of
    from crashlens.prefilter import anchor

    from crashlens.traceback import RECORD_START_MARKERS

    cat = get_catalog([])
    pf = Prefilter(cat)
    always = {anchor(m) for m in (*RECORD_START_MARKERS, *(b.trigger.encode() for b in cat.banners))}
    for r in cat.facts:
        cover = [c.encode() for c in covering_literals_of(r.pattern.source) or ()]
        trigger = r.trigger.encode()
        if cover and trigger not in always and trigger not in {anchor(c) for c in cover}:
            assert trigger not in pf.markers, r.trigger
            assert all(any(m in c for m in pf.markers) for c in cover), r.trigger


def test_a_fact_pattern_runs_only_on_lines_that_can_state_its_fact(monkeypatch) -> None:
    """A torch traceback names torch on most of its lines, and the torch-version rule's trigger is
    `torch`: its pattern (0.2 ms a search on a long line) must run only where the line holds what every
    match holds (`torch==2.`, `torch 2.`, ...), and the version stated among those lines is still found."""
    from crashlens import context

    cat = get_catalog([])
    searched: list[str] = []
    real = context.search

    def counting(pattern, text):
        searched.append(text)
        return real(pattern, text)

    monkeypatch.setattr(context, "search", counting)
    frames = [f'  File "/usr/lib/python3/site-packages/torch/_dynamo/symbolic_convert.py", line {n}, in step'
              for n in range(500)]
    collector = context.FactCollector(cat)
    for n, text in enumerate([*frames, "torch==2.7.1", *frames], 1):
        collector.feed(frame_line("log", n, text))
    assert collector.facts.values.get("version.torch") == "2.7.1"
    assert len(searched) < 10, len(searched)


@pytest.mark.skipif(not NATIVE, reason="crashlens._lines is not built here")
def test_banners_of_launches_that_did_not_crash_are_not_handed_over_one_by_one(monkeypatch) -> None:
    """Only the first start-up banner after a crash begins a round (rounds.py). The native locator sets
    lines of a banner's shape apart (Locator.aside), and the scan looks among them only for the first
    after a crash: a restart loop with ten times as many launches between the same crashes hands the
    scan no more lines one by one (counted, not timed), and the result is what the per-line path finds."""
    g = _gen_log()
    crashes = [g.sample_lines(p) for p in g.sample_paths()[:3]]
    cat = get_catalog([])
    handed: list[int] = []
    real_call = Locator.__call__

    def counting_call(self, chunk):
        got = real_call(self, chunk)
        handed[-1] += len(got[1])
        return got

    banners = []
    for lines in (2_000, 20_000):
        filler = g.SHAPES["startup"](random.Random(5))
        body = list(g.HEADER)
        for crash in crashes:  # launches that start up, then one that crashes; three times
            body += [*itertools.islice(filler, lines), *crash]
        body += list(itertools.islice(filler, lines))
        data = ("\n".join(body) + "\n").encode()
        banners.append(sum(1 for ln in body if any(b.trigger in ln for b in cat.banners)))
        handed.append(0)
        with monkeypatch.context() as mp:
            mp.setattr(Locator, "__call__", counting_call)
            n, diags = scan_chunks("log", iter_line_chunks(io.BytesIO(data), 64 << 10), cat, native=True)
        _, want = scan_lines("log", iter_lines(io.BytesIO(data)), cat)
        assert render(combine([("log", n, diags)])) == render(combine([("log", n, want)]))
        assert max(o.round for d in want for o in d.occurrences) >= 2  # a banner after a crash began a round
    assert banners[1] > 10 * banners[0] // 2 > 100, banners
    assert handed[1] <= handed[0] + 3 * len(crashes) * 10, (handed, banners)
