"""Parsing must hold on real logs: the same recorded traceback, framed the ways servers print it.

The tracebacks are real torch recordings (samples/raw/); the framing around them (vLLM and SGLang
prefixes, ANSI colours, CRLF, rank interleaving, truncation) is written here by hand, which is the only
kind of hand-written log text we allow.
"""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from conftest import SAMPLES
from crashlens.catalog import get_catalog
from crashlens.pipeline import combine, scan_lines

_EXC_START = re.compile(r"^(?:[a-z_]\w*\.)+[A-Z]\w*: ")  # a chain printed from its first exception line
RAW = sorted((SAMPLES / "raw").glob("*.log"))


def _scan(lines: list[str], name: str = "x.log"):
    n, diags = scan_lines(name, lines, get_catalog())
    return combine([(name, n, diags)]).diagnoses


def _fatal_samples() -> list[Path]:
    out = []
    for p in RAW:
        lines = p.read_text(errors="replace").splitlines()
        if any(d.fatal and d.family == "dynamo" and d.culprit for d in _scan(lines)):
            out.append(p)
    return out


FATAL = _fatal_samples() if RAW else []


def _key(d):
    return (d.id, d.signature, d.callee, (d.culprit.file, d.culprit.line) if d.culprit else None)


def _body(p: Path) -> list[str]:
    return [ln for ln in p.read_text(errors="replace").splitlines() if not ln.startswith("# crashlens sample:")]


def _sglang_record(body: list[str], rank: str, ts: str = "2026-04-16 10:22:33") -> list[str]:
    """SGLang logs the traceback as one record: only its first line carries the prefix.
    Python warnings printed before it go to stderr unprefixed."""
    i = next((k for k, ln in enumerate(body) if ln.startswith("Traceback (most recent call last):")
              or _EXC_START.match(ln)), 0)
    return body[:i] + [f"[{ts} {rank}] Scheduler hit an exception: {body[i]}"] + body[i + 1 :]


@pytest.mark.skipif(not FATAL, reason="no recorded samples")
@pytest.mark.parametrize("sample", FATAL, ids=[p.stem for p in FATAL])
def test_vllm_prefix_on_every_line_changes_nothing(sample):
    plain = _scan(_body(sample))
    framed = [f"(Worker_TP1 pid=4242) ERROR 06-18 10:22:33 [multiproc_executor.py:671] {ln}" for ln in _body(sample)]
    got = _scan(framed)
    assert [_key(d) for d in got] == [_key(d) for d in plain]
    assert all(d.occurrences[0].rank == "Worker_TP1" for d in got)
    assert all(d.context.server == "vllm" for d in got if d.family == "dynamo")


@pytest.mark.skipif(not FATAL, reason="no recorded samples")
@pytest.mark.parametrize("sample", FATAL, ids=[p.stem for p in FATAL])
def test_ansi_crlf_and_sglang_record_prefix_change_nothing(sample):
    plain = _scan(_body(sample))
    body = _body(sample)
    framed = [ln.replace("[2026", "\x1b[32m[2026").replace("] Sched", "]\x1b[0m Sched") + "\r"
              for ln in _sglang_record(body, "TP3")]
    got = _scan(framed)
    assert [_key(d) for d in got] == [_key(d) for d in plain]
    assert "TP3" in got[0].ranks


def _pipe_pieces(lines: list[str], limit: int = 4096) -> list[list[str]]:
    pieces: list[list[str]] = [[]]
    size = 0
    for ln in lines:
        if pieces[-1] and size + len(ln) + 1 > limit:
            pieces.append([])
            size = 0
        pieces[-1].append(ln)
        size += len(ln) + 1
    return pieces


@pytest.mark.skipif(not FATAL, reason="no recorded samples")
@pytest.mark.parametrize("sample", FATAL, ids=[p.stem for p in FATAL])
def test_interleaved_ranks_report_one_crash_with_all_ranks(sample):
    body = _body(sample)
    plain = next(d for d in _scan(body) if d.fatal)
    ranks = ["TP0", "TP1", "TP2", "TP3"]
    records = [_sglang_record(body, r) for r in ranks]
    start = next(k for k, ln in enumerate(records[0]) if ln.startswith("[2026"))
    # Warnings are printed while tracing, before any rank fails. Then the ranks fail at the same
    # moment: each record is one write, which a pipe delivers in pieces of at most 4 KiB, and the
    # pieces of different ranks interleave.
    out: list[str] = [ln for rec in records for ln in rec[:start]]
    queues = [_pipe_pieces(rec[start:]) for rec in records]
    while any(queues):
        for q in queues:
            if q:
                out.extend(q.pop(0))
    got = [d for d in _scan(out) if d.fatal]
    assert len(got) == 1, [d.title for d in got]
    assert _key(got[0]) == _key(plain)
    assert got[0].ranks == ranks


@pytest.mark.skipif(not FATAL, reason="no recorded samples")
@pytest.mark.parametrize("sample", FATAL, ids=[p.stem for p in FATAL])
def test_same_traceback_on_several_ranks_is_one_diagnosis(sample):
    body = _body(sample)
    plain = _scan(body)
    out = []
    for r in ("TP0", "TP1", "TP2"):
        out.extend(_sglang_record(body, r))
    got = _scan(out)
    assert len([d for d in got if d.fatal]) == len([d for d in plain if d.fatal])
    top = next(d for d in got if d.fatal)
    assert top.ranks == ["TP0", "TP1", "TP2"]
    assert _key(top) == _key(next(d for d in plain if d.fatal))


@pytest.mark.skipif(not FATAL, reason="no recorded samples")
@pytest.mark.parametrize("sample", FATAL, ids=[p.stem for p in FATAL])
def test_cut_off_traceback_still_names_the_culprit(sample):
    body = _body(sample)
    plain = next(d for d in _scan(body) if d.fatal)
    # Cut right after the culprit's frame line, as a pasted fragment or a killed process would.
    start = plain.occurrences[0].line - 1
    hits = [i for i, ln in enumerate(body)
            if i >= start and f'line {plain.culprit.line}, in {plain.culprit.function}' in ln]
    if not hits:
        pytest.skip("the culprit comes from dynamo's headers (a recompile's guard), not from this traceback's frames")
    idx = max(hits)
    got = [d for d in _scan(body[: idx + 2]) if d.family == "dynamo"]
    assert got, "cut-off traceback not detected"
    assert (got[0].culprit.file, got[0].culprit.line) == (plain.culprit.file, plain.culprit.line)
    if plain.complete:  # a cut copy never claims more than the whole record it was cut from
        assert got[0].confidence <= plain.confidence


@pytest.mark.skipif(not FATAL, reason="no recorded samples")
def test_id_is_the_same_under_another_install_prefix():
    """A crash id must not depend on where the library was installed (checkout vs site-packages)."""
    sample = next((p for p in FATAL if p.stem == "fakeserve-pcg-fp4"), FATAL[0])
    body = _body(sample)
    moved = [ln.replace("/work/main/samples/repro/", "/usr/local/lib/python3.12/dist-packages/") for ln in body]
    a = [d for d in _scan(body) if d.fatal][0]
    b = [d for d in _scan(moved) if d.fatal][0]
    assert a.id == b.id and a.culprit.line == b.culprit.line
