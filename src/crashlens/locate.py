"""Which lines of a chunk may matter, found natively: the fast half of the prefilter (prefilter.py).

Prefilter.may_matter asks of a line: does it hold a marker, a control character or a dotted name
(`.X`, `._X`)? Asked of every line in Python (a translate, a split and a set per chunk) that costs
about 3.5 s per GB. Here the same question is answered for a whole chunk in two native passes that
release the GIL:
- ahocorasick_rs (Rust's aho-corasick, whose SIMD "Teddy" searcher handles a few dozen literals at
  several GB/s) finds the markers;
- crashlens._lines (src/crashlens/_lines.c, built at install when a C compiler is present) counts the
  newlines, finds control characters and dotted names, and turns every hit into a line index.
Both are optional: without either, `Locator.create` gives None and the caller keeps the Python path.
CRASHLENS_PURE_PYTHON=1 turns this off (tests compare the two).

Chunks are located ahead of use on a small thread pool, so on two cores reading, searching and the
per-line pipeline overlap.
"""

from __future__ import annotations

import os
from collections.abc import Iterable, Iterator
from typing import Any

# (newlines in the chunk, indices of the lines that may matter, the byte offset each starts at)
Located = tuple[int, list[int], list[int]]

AHEAD = 4  # chunks located ahead of the one in use (bounded memory: AHEAD + 1 chunks held)
CHUNK = 1 << 20  # bytes of a file given to one worker
PROBE = 1 << 16  # bytes read at a time when looking for the line boundary after an offset


class Locator:
    def __init__(self, markers: Iterable[bytes], ac: Any, lines: Any) -> None:
        self._search = ac.BytesAhoCorasick(list(markers), matchkind=ac.MATCHKIND_LEFTMOST_LONGEST)
        self._lines = lines.lines_of_interest

    @classmethod
    def create(cls, markers: Iterable[bytes]) -> Locator | None:
        """A locator, or None where a native part is missing or turned off."""
        if os.environ.get("CRASHLENS_PURE_PYTHON"):
            return None
        try:
            import ahocorasick_rs

            from . import _lines  # type: ignore[attr-defined]
        except ImportError:
            return None
        return cls(markers, ahocorasick_rs, _lines)

    def __call__(self, chunk: bytes) -> Located:
        """Lines that may matter in a chunk of whole lines. Leftmost non-overlapping matches give at
        least one match in every line holding a marker (no marker spans a newline)."""
        offsets = [m[1] for m in self._search.find_matches_as_indexes(chunk)]
        n, indices, starts = self._lines(chunk, offsets)
        return n, indices, starts

    def ahead(self, chunks: Iterable[bytes]) -> Iterator[tuple[bytes, Located]]:
        """(chunk, its lines of interest), in order, each located on a worker thread ahead of use."""
        return _in_order((lambda c=c: [(c, self(c))]) for c in chunks)

    def read_file(self, fd: int, size: int, chunk: int = CHUNK) -> Iterator[tuple[bytes, Located]]:
        """A regular file's first `size` bytes as chunks of whole lines (what read.iter_line_chunks
        gives) with their lines of interest. Each worker reads its own byte range with os.pread and
        searches it, so reading, searching and the caller's work all overlap."""
        jobs = ((lambda k=k: self._range(fd, size, k * chunk, (k + 1) * chunk)) for k in range((size + chunk - 1) // chunk))
        return _in_order(jobs)

    def _range(self, fd: int, size: int, lo: int, hi: int) -> list[tuple[bytes, Located]]:
        """The lines that start in file bytes [lo, hi), located."""
        start, end = _boundary(fd, size, lo), _boundary(fd, size, hi)
        if start >= end:
            return []
        if end - start > 8 * (hi - lo):
            # A line far longer than a chunk: read.iter_line_chunks keeps memory bounded (it keeps
            # the head of such a line, as the per-line path does).
            from .read import iter_line_chunks

            return [(c, self(c)) for c in iter_line_chunks(_Range(fd, start, end), hi - lo)]
        data = _pread(fd, end - start, start)
        if not data.endswith(b"\n"):
            data += b"\n"  # a last line without a newline gets one, as in iter_line_chunks
        return [(data, self(data))]


def _in_order(jobs: Iterable[Any]) -> Iterator[Any]:
    """Run the jobs (callables returning lists) on two worker threads, AHEAD at a time, and yield the
    items of their results in job order."""
    from collections import deque
    from concurrent.futures import Future, ThreadPoolExecutor

    pending: deque[Future[list[Any]]] = deque()
    with ThreadPoolExecutor(max_workers=2, thread_name_prefix="crashlens-locate") as pool:
        try:
            for job in jobs:
                pending.append(pool.submit(job))
                if len(pending) > AHEAD:
                    yield from pending.popleft().result()
            while pending:
                yield from pending.popleft().result()
        finally:
            for fut in pending:
                fut.cancel()


def _pread(fd: int, n: int, at: int) -> bytes:
    data = os.pread(fd, n, at)
    while len(data) < n:  # a short read (or a file that shrank: stop at its end)
        more = os.pread(fd, n - len(data), at + len(data))
        if not more:
            break
        data += more
    return data


def _boundary(fd: int, size: int, at: int) -> int:
    """Where the first line starting at or after byte `at` starts (size if none does)."""
    if at <= 0:
        return 0
    pos = at - 1
    while pos < size:
        probe = os.pread(fd, min(PROBE, size - pos), pos)
        if not probe:
            break
        nl = probe.find(b"\n")
        if nl >= 0:
            return min(pos + nl + 1, size)
        pos += len(probe)
    return size


class _Range:
    """A read-only file object over bytes [start, end) of a file descriptor."""

    def __init__(self, fd: int, start: int, end: int) -> None:
        self._fd, self._pos, self._end = fd, start, end

    def read(self, n: int = -1) -> bytes:
        n = self._end - self._pos if n < 0 else min(n, self._end - self._pos)
        data = os.pread(self._fd, n, self._pos) if n > 0 else b""
        self._pos += len(data)
        return data
