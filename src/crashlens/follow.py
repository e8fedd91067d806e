"""Bytes from live sources: files followed by name like `tail -F` (and better), and a stream such as stdin."""

from __future__ import annotations

import hashlib
import os
import select
import stat
import time
from collections.abc import Callable, Iterator, Sequence
from typing import BinaryIO

from ._struct import dataclass, field
from .read import MAX_LINE_BYTES, InputError, decode_line

# Poll fast right after activity, back off while idle. The idle interval bounds the latency of the first
# line after a quiet spell (a crash usually comes after one): 50 ms keeps the median latency of a crash
# report near 60 ms, and a poll is one stat() per file: 20 polls a second measured 0.2-0.4% of one core.
MIN_INTERVAL = 0.02
MAX_INTERVAL = 0.05
BACKOFF = 1.5
# Bytes read from one file per poll, so one busy file cannot starve the others or grow memory.
READ_PER_POLL = 1024 * 1024
# The fingerprint that tells "truncated and rewritten longer" apart from "appended to".
FINGERPRINT_BYTES = 256
# A rotated-away file (renamed, or deleted while a writer still holds it) is read until it has been
# quiet this long: a writer keeps writing the old file until it reopens its log.
RETIRED_LINGER = 2.0

Notice = Callable[[str, str], None]  # (source name, message), e.g. ("app.log", "file truncated")


@dataclass(frozen=True, slots=True)
class NewFile:
    """The followed name is a new file from the next line on: rotated in, recreated, or truncated."""

    name: str


@dataclass(frozen=True, slots=True)
class Ended:
    """A followed stream (a FIFO or character device) reached its end: its writer closed it."""

    name: str


@dataclass(frozen=True, slots=True)
class Idle:
    """The sources were watched `seconds` longer and gave nothing beyond what was already yielded.

    Only time in which a writer was free to write counts: a pipe writer blocked on a full pipe while the
    reader was busy has not been quiet, so a caller adds these up to tell when a stream went quiet.
    """

    seconds: float


class LineBuffer:
    """Splits arriving bytes into physical lines; keeps a partial last line until its newline arrives."""

    __slots__ = ("_parts", "_size", "_skipping")

    def __init__(self) -> None:
        self._parts: list[bytes] = []
        self._size = 0
        self._skipping = False  # inside an over-long line whose first MAX_LINE_BYTES were already given out

    @property
    def pending(self) -> bool:
        return self._size > 0

    def feed(self, data: bytes) -> list[bytes]:
        out: list[bytes] = []
        start = 0
        n = len(data)
        while start < n:
            nl = data.find(b"\n", start)
            end = n if nl < 0 else nl + 1
            piece = data[start:end]
            start = end
            if self._skipping:
                if nl >= 0:
                    self._skipping = False
                continue
            if nl < 0:
                self._parts.append(piece)
                self._size += len(piece)
                if self._size >= MAX_LINE_BYTES:
                    # Same rule as read.iter_raw_lines: keep the head of an over-long line, drop the rest.
                    out.append(b"".join(self._parts)[:MAX_LINE_BYTES])
                    self._parts.clear()
                    self._size = 0
                    self._skipping = True
                continue
            if self._parts:
                self._parts.append(piece)
                piece = b"".join(self._parts)
                self._parts.clear()
                self._size = 0
            out.append(piece[:MAX_LINE_BYTES] if len(piece) > MAX_LINE_BYTES else piece)
        return out

    def flush(self) -> bytes | None:
        """The partial last line, given out as a line of its own (its writer went quiet)."""
        if not self._parts:
            return None
        raw = b"".join(self._parts)
        self._parts.clear()
        self._size = 0
        return raw


@dataclass(slots=True)
class _Handle:
    """One open file: the followed name's current file, or a rotated-away one still being drained."""

    fh: BinaryIO
    dev: int
    ino: int
    mtime_ns: int
    last_data: float
    offset: int = 0  # bytes consumed
    fingerprint: bytes = b""  # hash of the first fp_len bytes
    fp_len: int = 0
    buf: LineBuffer = field(default_factory=LineBuffer)

    def refingerprint(self) -> None:
        self.fp_len = min(FINGERPRINT_BYTES, self.offset)
        self.fingerprint = _fingerprint(self.fh, self.fp_len)

    def read(self, now: float) -> tuple[list[bytes], bool]:
        """Complete lines read from the current offset, and whether the per-poll budget ran out."""
        out: list[bytes] = []
        fd = self.fh.fileno()
        budget = READ_PER_POLL
        while budget > 0:
            data = _pread(self.fh, fd, min(65536, budget), self.offset)
            if not data:
                break
            self.offset += len(data)
            budget -= len(data)
            self.last_data = now
            if b"\x00" in data:
                # A writer that did not open with O_APPEND fills a copy-truncated file with NULs up to its
                # old offset; they are not text and would glue themselves to the next real line.
                data = data.replace(b"\x00", b"")
            out.extend(self.buf.feed(data))
        if self.fp_len < FINGERPRINT_BYTES and self.offset > self.fp_len:
            self.refingerprint()
        return out, budget <= 0

    def end_line(self) -> list[bytes]:
        """The partial last line as a line of its own: the writer went quiet, or this file ended."""
        raw = self.buf.flush()
        return [raw] if raw is not None else []


def _pread(fh: BinaryIO, fd: int, n: int, at: int) -> bytes:
    """os.pread; where it is missing (Windows), a seek and a read on the handle, which only this
    follower uses, so nothing else moves its offset in between."""
    pread = getattr(os, "pread", None)
    if pread is not None:
        return pread(fd, n, at)  # type: ignore[no-any-return]
    fh.seek(at)
    return fh.read(n)


def _fingerprint(fh: BinaryIO, length: int) -> bytes:
    head = _pread(fh, fh.fileno(), length, 0) if length else b""
    return hashlib.blake2b(head, digest_size=16).digest()


class FollowedFile:
    """One file followed by name: it may not exist yet, be rotated, truncated, rewritten or recreated."""

    def __init__(self, path: str, from_start: bool, quiet_period: float, notice: Notice | None = None) -> None:
        self.path = path
        self.name = path
        self.quiet_period = quiet_period
        self.behind = False  # more bytes are waiting than one poll reads
        self.renewed: list[int] = []  # where, in the lines the last poll gave, a new file began
        self._had_file = False  # a file was open under this name before (so the next one is a new file)
        self._notice = notice
        self._cur: _Handle | None = None
        self._retired: list[_Handle] = []
        self._missing_reported = False
        try:
            st = os.stat(path)
        except FileNotFoundError:
            self._say("does not exist yet; waiting for it to appear")
            self._missing_reported = True
            return
        except OSError as e:
            raise InputError(f"{path}: cannot read ({e.strerror or e})") from None
        if stat.S_ISDIR(st.st_mode):
            raise InputError(f"{path}: is a directory (give log files)")
        h = self._open()
        if h is not None and not from_start:
            h.offset = os.fstat(h.fh.fileno()).st_size
            h.refingerprint()

    def _say(self, msg: str) -> None:
        if self._notice is not None:
            self._notice(self.name, msg)

    def _open(self) -> _Handle | None:
        try:
            fh: BinaryIO = open(self.path, "rb")  # noqa: SIM115 - closed on rotation or close()
        except FileNotFoundError:
            return None
        except OSError as e:
            if not self._missing_reported:
                self._say(f"has become inaccessible: {e.strerror or e}")
                self._missing_reported = True
            return None
        st = os.fstat(fh.fileno())
        if stat.S_ISDIR(st.st_mode):
            fh.close()
            return None
        self._had_file = True
        self._cur = _Handle(fh, st.st_dev, st.st_ino, st.st_mtime_ns, time.monotonic())
        return self._cur

    def _read(self, h: _Handle, now: float) -> list[bytes]:
        lines, behind = h.read(now)
        self.behind = self.behind or behind
        return lines

    def _retire(self, h: _Handle, now: float) -> list[bytes]:
        """The name now points elsewhere (or nowhere): read what the old file holds, and keep it a while,
        because a writer goes on writing the old file until it reopens its log."""
        out = self._read(h, now)
        h.last_data = now
        self._retired.append(h)
        self._cur = None
        return out

    def poll(self, now: float) -> list[bytes]:
        """Raw physical lines that arrived since the last poll (a partial last line is held back until its
        newline arrives or the file has been quiet for the quiet period). `renewed` says where a new
        file (rotated in, recreated, or the same one truncated) began among them."""
        self.behind = False
        self.renewed = []
        out: list[bytes] = []
        for old in list(self._retired):
            out.extend(self._read(old, now))
            if now - old.last_data >= RETIRED_LINGER:
                out.extend(old.end_line())
                old.fh.close()
                self._retired.remove(old)
            elif now - old.last_data >= self.quiet_period:
                out.extend(old.end_line())
        h = self._cur
        try:
            st: os.stat_result | None = os.stat(self.path)
        except OSError:
            st = None
        if st is None:
            if h is not None:
                out.extend(self._retire(h, now))
                self._say("has become inaccessible: No such file or directory")
                self._missing_reported = True
            return out
        if h is not None and (st.st_ino != h.ino or st.st_dev != h.dev):
            out.extend(self._retire(h, now))
            self._say("has been replaced;  following new file")
            self._missing_reported = False
            h = None
        if h is None:
            had = self._had_file
            h = self._open()
            if h is None:
                return out
            if had:
                self.renewed.append(len(out))
            if self._missing_reported:
                self._say("has appeared;  following new file")
                self._missing_reported = False
            out.extend(self._read(h, now))
            return out
        if st.st_size == h.offset and st.st_mtime_ns == h.mtime_ns:
            if h.buf.pending and now - h.last_data >= self.quiet_period:
                out.extend(h.end_line())
            return out
        h.mtime_ns = st.st_mtime_ns
        truncated = st.st_size < h.offset
        if not truncated and h.fp_len:
            # Truncated and rewritten past the old size before this poll: same inode and no size drop, but
            # the first bytes changed (GNU tail misses this and resumes mid-line).
            truncated = _fingerprint(h.fh, h.fp_len) != h.fingerprint
        if truncated:
            self._say("file truncated")
            out.extend(h.end_line())
            self.renewed.append(len(out))
            h.offset = 0
            h.refingerprint()
        out.extend(self._read(h, now))
        return out

    def close(self) -> None:
        for h in self._retired:
            h.fh.close()
        self._retired.clear()
        if self._cur is not None:
            self._cur.fh.close()
            self._cur = None


class StreamedFile:
    """A FIFO or character device followed by name: opened once, without waiting for a writer, and read as
    a stream to its end (a FIFO cannot be re-read or re-opened: its writer would get EPIPE)."""

    def __init__(self, path: str, quiet_period: float) -> None:
        self.path = self.name = path
        self.quiet_period = quiet_period
        self.behind = False
        self.ended = False
        self._buf = LineBuffer()
        self._got = False  # a writer has written: an end of file now means it closed its end
        self._last_data = time.monotonic()
        try:
            self._fd = os.open(path, os.O_RDONLY | getattr(os, "O_NONBLOCK", 0))
        except OSError as e:
            raise InputError(f"{path}: cannot read ({e.strerror or e})") from None

    def poll(self, now: float) -> list[bytes]:
        self.behind = False
        out: list[bytes] = []
        budget = READ_PER_POLL
        while budget > 0 and not self.ended:
            try:
                data = os.read(self._fd, min(65536, budget))
            except BlockingIOError:
                break
            if not data:
                if self._got:  # the writer closed it: the stream is over
                    self.ended = True
                    raw = self._buf.flush()
                    if raw is not None:
                        out.append(raw)
                break
            self._got = True
            self._last_data = now
            budget -= len(data)
            out.extend(self._buf.feed(data))
        self.behind = budget <= 0
        if not self.ended and self._buf.pending and now - self._last_data >= self.quiet_period:
            raw = self._buf.flush()
            if raw is not None:
                out.append(raw)
        return out

    def close(self) -> None:
        if self._fd >= 0:
            os.close(self._fd)
            self._fd = -1


def _is_stream(path: str) -> bool:
    try:
        mode = os.stat(path).st_mode
    except OSError:
        return False
    return stat.S_ISFIFO(mode) or stat.S_ISCHR(mode)


def follow(
    paths: Sequence[str],
    *,
    from_start: bool = False,
    quiet_period: float = 0.5,
    notice: Notice | None = None,
    min_interval: float = MIN_INTERVAL,
    max_interval: float = MAX_INTERVAL,
    events: bool = False,
) -> Iterator[tuple[str, str] | Idle | Ended | NewFile]:
    """(source name, text line) as lines arrive in any of the files, and an Idle after each poll round; a
    NewFile where a followed name became a new file and an Ended when a FIFO or character device among them
    reached its end, if `events` is set.

    Runs until the caller stops iterating (Ctrl-C reaches the caller untouched), or until every source
    was a stream and has ended."""
    files: list[FollowedFile | StreamedFile] = [
        StreamedFile(p, quiet_period) if _is_stream(p) else FollowedFile(p, from_start, quiet_period, notice)
        for p in paths]
    interval = min_interval
    last_round: float | None = None
    try:
        while True:
            now = time.monotonic()
            active = behind = False
            for f in list(files):
                lines = f.poll(now)
                behind = behind or f.behind
                renewed = f.renewed if isinstance(f, FollowedFile) else []
                if lines or renewed:
                    active = True
                    for i, raw in enumerate(lines):
                        if events and renewed and i in renewed:
                            yield NewFile(f.name)
                        yield f.name, decode_line(raw)
                    if events and len(lines) in renewed:
                        yield NewFile(f.name)
                if isinstance(f, StreamedFile) and f.ended:
                    f.close()
                    files.remove(f)
                    if events:
                        yield Ended(f.name)
                    if not files:
                        return
            # A file writer never waits for its reader: whatever was written before this round's stat()
            # has been read (unless a file is behind), so the time since the last round counts as quiet.
            yield Idle(0.0 if behind or last_round is None else now - last_round)
            last_round = now
            if behind:
                continue
            interval = min_interval if active else min(max_interval, interval * BACKOFF)
            time.sleep(interval)
    finally:
        for f in files:
            f.close()


def stream_chunks(
    fh: BinaryIO, *, min_interval: float = MIN_INTERVAL, max_interval: float = MAX_INTERVAL
) -> Iterator[bytes | Idle]:
    """Bytes of a stream (stdin) as soon as they arrive, each followed by an Idle for the time spent
    waiting for them; an Idle alone when nothing came for a poll interval. Ends at end of input.

    Waiting is done by select(), so an idle stream costs no CPU between ticks."""
    try:
        fd = fh.fileno()
    except (AttributeError, OSError, ValueError):
        fd = -1
    if fd < 0:
        # Not a real descriptor (an in-memory stream in tests): read it as it comes.
        while True:
            data = fh.read(65536)
            if not data:
                return
            yield data
    interval = min_interval
    while True:
        t0 = time.monotonic()
        try:
            ready, _, _ = select.select([fd], [], [], interval)
        except InterruptedError:
            continue
        except OSError:
            # Windows selects sockets only: read the pipe as it comes (no idle ticks between writes).
            yield from iter(lambda: os.read(fd, 65536), b"")
            return
        waited = time.monotonic() - t0
        if not ready:
            interval = min(max_interval, interval * BACKOFF)
            yield Idle(waited)
            continue
        data = os.read(fd, 65536)
        if not data:
            return
        interval = min_interval
        yield data
        # Only the wait counts as quiet, and only once the bytes that ended it have been taken in.
        yield Idle(waited)
