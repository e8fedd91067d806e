"""When a log line was printed: the timestamp its prefix carries, read back for chosen lines of a source."""

from __future__ import annotations

import re
from collections.abc import Iterable, Iterator

from .read import iter_line_chunks, open_source

# Lines looked at, back from a line without a timestamp (an unprefixed traceback line), for the
# nearest one that has one: it was printed then or just before.
LOOK_BACK = 256

# Searched in a line's first bytes only: a timestamp is part of a prefix, not of the message.
_HEAD = 96
_FULL = re.compile(rb"(\d{4})-(\d\d)-(\d\d)[ T](\d\d):(\d\d):(\d\d)")  # SGLang, docker, ISO 8601
_NO_YEAR = re.compile(  # vLLM `INFO 06-01 08:00:00`, glog `E0601 08:00:00.123`
    rb"(?:(?:DEBUG|INFO|WARNING|WARN|ERROR|CRITICAL) (\d\d)-(\d\d)|[VIWEC](\d\d)(\d\d)) (\d\d):(\d\d):(\d\d)"
)


def timestamp(raw: bytes) -> str | None:
    """ISO 8601 for the timestamp a line starts with: 2026-04-16T10:23:12, or --06-01T08:00:00 when
    the log prints no year; None when it has none."""
    head = raw[:_HEAD]
    m = _FULL.search(head)
    if m is not None:
        y, mo, d, h, mi, s = (g.decode() for g in m.groups())
        return f"{y}-{mo}-{d}T{h}:{mi}:{s}"
    m = _NO_YEAR.search(head)
    if m is not None:
        g = [x.decode() if x is not None else None for x in m.groups()]
        mo, d = (g[0], g[1]) if g[0] is not None else (g[2], g[3])
        return f"--{mo}-{d}T{g[4]}:{g[5]}:{g[6]}"
    return None


def times_in(chunks: Iterable[bytes], wanted: Iterable[int],
             restarts: list[int] | None = None) -> dict[int, str | None]:
    """The timestamp of each wanted line (1-based) of a source given as chunks of whole lines: its own,
    else the nearest one up to LOOK_BACK lines before it. Lines that start a server (RESTART_MARKERS)
    between the first and the last wanted line are appended to `restarts`, if given (the others
    separate no two wanted lines)."""
    want = sorted(set(wanted))
    out: dict[int, str | None] = {}
    if not want:
        return out
    base = 0
    tail: list[bytes] = []  # the previous chunk's last lines, for looking back across the boundary
    w = 0
    for chunk in chunks:
        n = chunk.count(b"\n")
        if want[w] > base + n:  # no wanted line here
            if restarts is not None and w > 0:
                restarts.extend(base + k for k in _marker_lines(chunk))
            tail = _keep_tail(tail, _last_lines(chunk, LOOK_BACK))
            base += n
            continue
        last = w
        while last + 1 < len(want) and want[last + 1] <= base + n:
            last += 1
        # Split only as far as the last wanted line of the chunk: the rest is one piece, never looked at.
        upto = want[last] - base
        lines = chunk.split(b"\n", upto)[:upto]
        if restarts is not None:
            lo = 0 if w > 0 else _offset(lines, want[0] - base - 1)
            hi = len(chunk) if last + 1 < len(want) else _offset(lines, upto - 1)
            first_line = base + (0 if w > 0 else want[0] - base - 1)
            restarts.extend(first_line + k for k in _marker_lines(chunk, lo, hi))
        seen = tail + lines
        for line in want[w : last + 1]:
            out[line] = _back(seen, len(tail) + line - base - 1)
        w = last + 1
        if w == len(want):
            break
        tail = _keep_tail(tail, lines if upto >= n else _last_lines(chunk, LOOK_BACK))
        base += n
    for line in want[w:]:
        out[line] = None
    return out


def _keep_tail(tail: list[bytes], lines: list[bytes]) -> list[bytes]:
    """The last LOOK_BACK lines read, whatever the chunks' sizes (a chunk may be shorter)."""
    return (tail + lines)[-LOOK_BACK:] if len(lines) < LOOK_BACK else lines[-LOOK_BACK:]


def _offset(lines: list[bytes], i: int) -> int:
    """The byte offset, in their chunk, of line i of `lines` (the chunk's first lines)."""
    return sum(map(len, lines[:i])) + i


# Lines a server prints once per start (SGLang's arguments, each rank's distributed init; vLLM's
# banner): a crash seen before one of these and again after it happened twice.
RESTART_MARKERS = (b"server_args=ServerArgs(", b"Init torch distributed begin.", b"vLLM API server version ",
                   b"Initializing a V1 LLM engine")


def _marker_lines(chunk: bytes, lo: int = 0, hi: int | None = None) -> list[int]:
    """1-based line numbers, counted from the line at byte `lo` of a chunk of whole lines, of the lines
    in chunk[lo:hi] holding a restart marker."""
    hi = len(chunk) if hi is None else hi
    starts: list[int] = []
    for marker in RESTART_MARKERS:
        pos = chunk.find(marker, lo, hi)
        while pos >= 0:
            starts.append(pos)
            pos = chunk.find(marker, pos + len(marker), hi)
    found: list[int] = []
    line, at = 1, lo
    for pos in sorted(starts):  # newlines counted once, from one position to the next
        line += chunk.count(b"\n", at, pos)
        at = pos
        if not found or found[-1] != line:
            found.append(line)
    return found


def _back(lines: list[bytes], i: int) -> str | None:
    for k in range(i, max(-1, i - LOOK_BACK - 1), -1):
        if 0 <= k < len(lines):
            ts = timestamp(lines[k])
            if ts is not None:
                return ts
    return None


def _last_lines(chunk: bytes, n: int) -> list[bytes]:
    end = len(chunk) - 1
    start = end
    for _ in range(n):
        j = chunk.rfind(b"\n", 0, start)
        if j < 0:
            start = -1
            break
        start = j
    return chunk[start + 1 : end].split(b"\n")


def line_times(path: str, wanted: Iterable[int], restarts: list[int] | None = None) -> dict[int, str | None]:
    """times_in for a file (plain or .gz); a source that stops early gives None for the rest."""
    _src, fh = open_source(path, quiet=True)  # a second reading: the first gave the warnings
    try:
        return times_in(_until_cut(iter_line_chunks(fh)), wanted, restarts)
    finally:
        fh.close()


def _until_cut(chunks: Iterator[bytes]) -> Iterator[bytes]:
    import zlib

    try:
        yield from chunks
    except (EOFError, OSError, zlib.error):
        return


def with_times(doc: dict[str, object], paths: dict[str, str]) -> dict[str, object]:
    """A scan document (render.json.document) whose occurrences carry the time their log line has,
    for the HTML report's timeline; `paths`: source name -> file (sources not in it, stdin, get none)."""
    wanted: dict[str, set[int]] = {}
    for d in doc.get("diagnoses", []):  # type: ignore[attr-defined]
        for o in d["occurrences"]:
            if o["source"] in paths:
                wanted.setdefault(o["source"], set()).add(o["line"])
    times: dict[str, dict[int, str | None]] = {}
    for name, lines in wanted.items():
        try:
            times[name] = line_times(paths[name], lines)
        except Exception:  # noqa: BLE001 - a time is an extra; a file gone since the scan has none
            times[name] = {}
    order = {name: i for i, name in enumerate(s["name"] for s in doc.get("sources", []))}  # type: ignore[attr-defined]
    for d in doc.get("diagnoses", []):  # type: ignore[attr-defined]
        for o in d["occurrences"]:
            o["time"] = times.get(o["source"], {}).get(o["line"])
        # earliest first: by time where every copy has one, else in the logs' order
        timed = all(o["time"] for o in d["occurrences"])
        d["occurrences"].sort(key=lambda o: (o["time"] if timed else "", order.get(o["source"], 0), o["line"]))
    return doc
