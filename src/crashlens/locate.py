"""Which lines of a chunk may matter, found natively: the fast half of the prefilter (prefilter.py).

Prefilter.may_matter asks of a line: does it hold a marker, a control character or a dotted name
(`.X`, `._X`)? Asked of every line in Python (a translate, a split and a set per chunk) that costs
about 3.5 s per GB. crashlens._lines (src/crashlens/_lines.c, built at install where a C compiler is
present) answers it for a whole chunk while releasing the GIL:
- where the CPU has AVX2, in one pass (`Finder`): the markers are found by a Teddy-style filter in the
  same pass that counts newlines and finds control characters and dotted names;
- elsewhere in two: ahocorasick_rs (Rust's aho-corasick, with SIMD searchers for ARM too) finds the
  markers, then `lines_of_interest` does the rest with the portable loop.
Without the C helper (or without either searcher), `Locator.create` gives None and the caller keeps
the Python path. CRASHLENS_PURE_PYTHON=1 turns this off (tests compare the paths).

Chunks are located ahead of use on two worker threads, so on two cores reading, searching and the
per-line pipeline overlap.
"""

from __future__ import annotations

import os
from collections.abc import Iterable, Iterator

TYPE_CHECKING = False  # typing.TYPE_CHECKING without importing typing (~4 ms of start-up)
if TYPE_CHECKING:
    from typing import Any

# (newlines in the chunk, indices of the lines that may matter, the byte offset each starts at, the
# indices and starts of the lines set aside, the shape keys that set them aside: see Locator.aside)
Located = tuple[int, list[int], list[int], list[int], list[int], frozenset[int]]

AHEAD = 4  # jobs located ahead of the chunk in use (bounded memory: at most AHEAD + 2 chunks held)
CHUNK = 2 << 20  # bytes of a file given to one worker
PROBE = 1 << 12  # bytes read at a time when looking for the line boundary after an offset
SLACK = 1 << 17  # room in a pooled buffer for the lines that straddle its range's ends
SWITCH_INTERVAL = 0.0005  # seconds: sys.setswitchinterval while the workers run (see _in_order)


class Locator:
    def __init__(self, make: Any, markers: Iterable[bytes]) -> None:
        from . import _lines  # type: ignore[attr-defined]

        self._lines = _lines
        self._make = make  # markers -> the function that locates a chunk (chunk, known, aside)
        self._locate = make(list(markers))
        # The one-pass Finder reads a range and locates it in one native call (_range); None: Python
        # reads it (two passes, Windows, or a test comparing the ways).
        self.read_range: Any = getattr(self._locate, "read_range", None)
        self._known = b""  # shape keys of lines judged not to matter, ascending (array('Q') bytes)
        self._aside: tuple[frozenset[int], bytes] = (frozenset(), b"")  # keys to set apart, and as bytes

    @classmethod
    def create(cls, markers: Iterable[bytes], fused: bool | None = None) -> Locator | None:
        """A locator, or None where a native part is missing or turned off. `fused`: the one-pass
        Finder (True), ahocorasick_rs and the second pass (False), or the faster of the two here (None):
        Finder with AVX2 or AVX-512, ahocorasick_rs (whose searchers use NEON on ARM) otherwise."""
        if os.environ.get("CRASHLENS_PURE_PYTHON"):
            return None
        try:
            from . import _lines  # type: ignore[attr-defined]
        except ImportError:
            return None
        if fused is None:
            fused = bool(_lines.HAVE_AVX2)
            if not fused:
                try:
                    import ahocorasick_rs  # is the two-pass searcher here?
                except ImportError:
                    fused = True
        if fused:  # (Finder's portable loop is slower than ahocorasick_rs, and faster than Python)
            def make_fused(ms: list[bytes]) -> Any:
                finder = _lines.Finder(ms)
                locate = finder.locate

                def fused(chunk: bytes | bytearray, known: bytes, aside: bytes) -> Any:
                    # Known lines are left out, and lines to set apart set apart, in the same pass.
                    return locate(chunk, known=known, aside=aside)

                # A byte range read and located in one native call (see _range); not on Windows.
                fused.read_range = getattr(finder, "read_range", None)  # type: ignore[attr-defined]
                return fused

            return cls(make_fused, markers)
        try:
            import ahocorasick_rs
        except ImportError:
            return None
        lines, drop_known = _lines.lines_of_interest, _lines.drop_known

        def make(ms: list[bytes]) -> Any:
            search = ahocorasick_rs.BytesAhoCorasick(ms, matchkind=ahocorasick_rs.MATCHKIND_LEFTMOST_LONGEST)

            def two_passes(chunk: bytes | bytearray, known: bytes, aside: bytes) -> tuple[Any, ...]:
                # Leftmost non-overlapping matches give at least one match in every line holding a
                # marker (no marker spans a newline).
                n, indices, starts = lines(chunk, [m[1] for m in search.find_matches_as_indexes(chunk)])
                if (known or aside) and indices:
                    return (n, *drop_known(chunk, indices, starts, known, aside))
                return n, indices, starts, [], []

            return two_passes

        return cls(make, markers)

    def retarget(self, markers: Iterable[bytes]) -> None:
        """Look for these markers in the chunks located from now on (those located already, at most
        AHEAD + 1 ahead of the caller, keep what they found with the old ones): the pipeline narrows
        them as start-up facts become known (Prefilter.retire)."""
        self._locate = self._make(list(markers))
        if self.read_range is not None:
            self.read_range = self._locate.read_range

    def shape_key(self, line: bytes) -> int:
        """The key of a line's shape (digits read as 0), as `known` takes it."""
        return self._lines.shape_key(line)  # type: ignore[no-any-return]

    def known(self, keys: Iterable[int]) -> None:
        """Leave out of the chunks located from now on every line whose shape key is one of these
        (lines with a control character aside): the caller judged a line of that shape once, and it
        cannot matter (a torch warning that names an `Error` in passing, printed by every process)."""
        from array import array

        self._known = array("Q", sorted(keys)).tobytes()

    def drop_known(self, chunk: bytes | bytearray, indices: list[int], starts: list[int],
                   keys: Iterable[int]) -> tuple[list[int], list[int]]:
        """Of a chunk's located lines (indices and starts), those whose shape key is none of these
        (lines with a control character kept): what locating the chunk with these keys `known` would
        have found. For a chunk located ahead, before the keys were judged."""
        from array import array

        known = array("Q", sorted(keys)).tobytes()
        return self._lines.drop_known(chunk, indices, starts, known)  # type: ignore[no-any-return]

    def aside(self, keys: Iterable[int]) -> None:
        """Set apart, in the chunks located from now on, every line whose shape key is one of these
        (lines with a control character aside): they come back as the fourth and fifth items of what a
        chunk gives, with these keys as the sixth. The caller looks at them only when it must (a
        start-up banner matters only after a crash, see skim.Skimmer), and in bulk."""
        from array import array

        got = frozenset(keys)
        self._aside = (got, array("Q", sorted(got)).tobytes())

    def __call__(self, chunk: bytes | bytearray) -> Located:
        """Lines that may matter in a chunk of whole lines: (newlines, indices, starts, indices set
        aside, their starts, the keys set aside)."""
        keys, aside = self._aside
        return (*self._locate(chunk, self._known, aside), keys)  # type: ignore[no-any-return]

    def ahead(self, chunks: Iterable[bytes]) -> Iterator[tuple[bytes, Located]]:
        """(chunk, its lines of interest), in order, each located on a worker thread ahead of use."""
        return _in_order((lambda c=c: [(c, self(c))]) for c in chunks)

    def read_file(self, fd: int, size: int, chunk: int = CHUNK) -> Iterator[tuple[bytes, Located]]:
        """A regular file's first `size` bytes as chunks of whole lines (what read.iter_line_chunks
        gives) with their lines of interest. Each worker reads its own byte range with os.pread and
        searches it, so reading, searching and the caller's work all overlap.

        Where os.preadv exists the chunks are bytearrays from a small pool, each reused once the
        caller asks for the next chunk: a fresh megabyte per chunk costs page faults (about a fifth of
        the time). The caller must not keep a chunk (slices of it are copies, so those are fine)."""
        if size <= 2 * chunk:  # a small file: one read, no threads (they cost start-up time)
            yield from self._range(fd, size, 0, size, None)
            return
        pool = _Pool(AHEAD + 4, chunk + SLACK) if hasattr(os, "preadv") else None
        jobs = ((lambda k=k: self._range(fd, size, k * chunk, (k + 1) * chunk, pool))
                for k in range((size + chunk - 1) // chunk))
        for item in _in_order(jobs):
            yield item
            if pool is not None:
                pool.give_back(item[0])

    def _range(self, fd: int, size: int, lo: int, hi: int, pool: _Pool | None) -> list[tuple[bytes, Located]]:
        """The lines that start in file bytes [lo, hi), located."""
        # A range where no line starts is empty: looking no further than its end keeps a file of one
        # huge line from being scanned to its end once per range.
        read_range = self.read_range
        if pool is not None and read_range is not None:
            # Read and located in one native call that holds no GIL: a worker that took the GIL
            # between its reads and its search (four times a range) waited up to a switch interval
            # (5 ms) each time the main thread was busy in Python, which it is while it diagnoses.
            known, (keys, aside) = self._known, self._aside
            buf = pool.take()
            got = read_range(fd, lo, hi, size, buf, known, aside)
            if len(got) > 2:
                del buf[got[2]:]  # keeps the allocation (see _Pool.read)
                return [(buf, (*got[3:], keys))]  # type: ignore[list-item]
            pool.give_back(buf)
            start, end = got  # none start here, or their lines are too long for a buffer: read below
            if start >= hi or start >= size:
                return []
        else:
            start = _boundary(fd, size, lo, hi)
            if start >= hi or start >= size:
                return []
            end = _boundary(fd, size, hi)
        if end - start > 8 * (hi - lo):
            # A line far longer than a chunk: read.iter_line_chunks keeps memory bounded (it keeps
            # the head of such a line, as the per-line path does).
            from .read import iter_line_chunks

            return [(c, self(c)) for c in iter_line_chunks(_Range(fd, start, end), hi - lo)]  # type: ignore[arg-type]
        data: bytes | bytearray
        if pool is not None and end - start < pool.size:
            data = pool.read(fd, end - start, start)
        else:
            data = _pread(fd, end - start, start)
        if not data.endswith(b"\n"):
            data += b"\n"  # a last line without a newline gets one, as in iter_line_chunks
        return [(data, self(data))]  # type: ignore[list-item]


class _Pool:
    """Reusable read buffers (bytearrays) for Locator.read_file."""

    def __init__(self, count: int, size: int) -> None:
        import queue
        import threading

        self.size = size
        self._zeros = bytes(size)
        self._free: queue.SimpleQueue[bytearray] = queue.SimpleQueue()
        self._ids: set[int] = set()
        self._spare = count  # buffers not made yet: each is made by the worker that first needs it
        self._lock = threading.Lock()

    def take(self, n: int | None = None) -> bytearray:
        """A pool buffer of exactly n bytes (default: the pool's size), its content undefined."""
        n = self.size if n is None else n
        with self._lock:
            make = self._free.empty() and self._spare > 0
            self._spare -= make
        if make:
            buf = bytearray(n)
            self._ids.add(id(buf))
        else:
            buf = self._free.get()  # never waits long: at most AHEAD + 2 buffers are in use
        if len(buf) < n:
            buf += memoryview(self._zeros)[: n - len(buf)]
        elif len(buf) > n:
            del buf[n:]  # keeps the allocation: n is never below half of it
        return buf

    def read(self, fd: int, n: int, at: int) -> bytearray:
        """n bytes of the file at `at` (fewer if it shrank) in a pool buffer of exactly that length."""
        buf = self.take(n)
        got = 0
        with memoryview(buf) as view:
            while got < n:
                k = os.preadv(fd, [view[got:]], at + got)
                if k <= 0:
                    break
                got += k
        if got < n:
            del buf[got:]
        return buf

    def give_back(self, buf: object) -> None:
        if id(buf) in self._ids:
            self._free.put(buf)  # type: ignore[arg-type]


class _Slot:
    """One job's result; its lock is held until a worker has filled it in."""

    __slots__ = ("error", "lock", "value")

    def __init__(self, lock: Any) -> None:
        self.lock = lock
        self.lock.acquire()
        self.value: list[Any] = []
        self.error: BaseException | None = None


def _in_order(jobs: Iterable[Any]) -> Iterator[Any]:
    """Run the jobs (callables returning lists) on two worker threads, AHEAD at a time, and yield the
    items of their results in job order. (Plain threads and locks: concurrent.futures would add its
    import, and logging's, to every big scan's start-up.)"""
    import queue
    import sys
    import threading
    from collections import deque

    todo: queue.SimpleQueue[tuple[Any, _Slot] | None] = queue.SimpleQueue()
    # A worker takes the GIL twice a job (its next job, then its results); while the main thread runs
    # Python (a crash diagnosed) it waits for the switch interval each time, 5 ms by default, so the
    # workers stalled while there was a core for them. Shorter while they run.
    interval = sys.getswitchinterval()
    sys.setswitchinterval(min(interval, SWITCH_INTERVAL))

    def work() -> None:
        while (item := todo.get()) is not None:
            job, slot = item
            try:
                slot.value = job()
            except BaseException as e:  # noqa: BLE001 - handed to the consumer, raised there
                slot.error = e
            slot.lock.release()

    workers = [threading.Thread(target=work, name="crashlens-locate", daemon=True) for _ in range(2)]
    for w in workers:
        w.start()
    pending: deque[_Slot] = deque()

    def take() -> list[Any]:
        slot = pending.popleft()
        slot.lock.acquire()
        if slot.error is not None:
            raise slot.error
        return slot.value

    try:
        for job in jobs:
            slot = _Slot(threading.Lock())
            pending.append(slot)
            todo.put((job, slot))
            if len(pending) > AHEAD:
                yield from take()
        while pending:
            yield from take()
    finally:
        for _ in workers:
            todo.put(None)  # jobs already queued still run (at most AHEAD + 1), then the workers stop
        sys.setswitchinterval(interval)


def _pread(fd: int, n: int, at: int) -> bytes:
    data = os.pread(fd, n, at)
    while len(data) < n:  # a short read (or a file that shrank: stop at its end)
        more = os.pread(fd, n - len(data), at + len(data))
        if not more:
            break
        data += more
    return data


def _boundary(fd: int, size: int, at: int, limit: int | None = None) -> int:
    """Where the first line starting at or after byte `at` starts: `size` if none does, or `limit`
    if none does before it. Probes grow (4 KB, 8 KB, ... 1 MB): a line may be very long."""
    if at <= 0:
        return 0
    end = size if limit is None else min(size, limit)
    pos, step = at - 1, PROBE
    while pos < end:
        probe = os.pread(fd, min(step, end - pos), pos)
        if not probe:
            break
        nl = probe.find(b"\n")
        if nl >= 0:
            return min(pos + nl + 1, size)
        pos += len(probe)
        step = min(step * 2, 1 << 20)
    return end


class _Range:
    """A read-only file object over bytes [start, end) of a file descriptor."""

    def __init__(self, fd: int, start: int, end: int) -> None:
        self._fd, self._pos, self._end = fd, start, end

    def read(self, n: int = -1) -> bytes:
        n = self._end - self._pos if n < 0 else min(n, self._end - self._pos)
        data = os.pread(self._fd, n, self._pos) if n > 0 else b""
        self._pos += len(data)
        return data
