"""Bytes in, text lines out: files, FIFOs, compressed files and stdin, read in bounded chunks."""

from __future__ import annotations

import os
import stat
import sys
from collections.abc import Callable, Iterator

from ._struct import dataclass
from .errors import UserError

TYPE_CHECKING = False  # typing.TYPE_CHECKING without importing typing (~4 ms of start-up)
if TYPE_CHECKING:
    from typing import Any, BinaryIO

# A line longer than this is cut: a 50 MB single line must not cost 50 MB of memory.
MAX_LINE_BYTES = 64 * 1024


class InputError(UserError):
    """A source the user named cannot be read; the CLI turns it into one line and exit code 2."""


@dataclass(frozen=True, slots=True)
class Source:
    name: str  # what the user typed ("-" for stdin)
    path: str | None  # None for stdin
    stream: bool = False  # a FIFO, character device or stdin: read once, front to back, never reopened
    compression: str | None = None  # "gzip", "xz", "bzip2", "zstd": decompressed as it is read


# Compressed formats, known by extension or, where the name says nothing, by their first bytes. A
# compressed log is never read as text. zstd is in the standard library from Python 3.14 only.
_COMPRESSED: tuple[tuple[str, tuple[str, ...], tuple[bytes, ...]], ...] = (
    ("gzip", (".gz",), (b"\x1f\x8b",)),
    ("xz", (".xz", ".lzma"), (b"\xfd7zXZ\x00",)),
    ("bzip2", (".bz2",), tuple(b"BZh%d1AY&SY" % n for n in range(1, 10)) + (b"BZh9\x17rE8P\x90",)),
    ("zstd", (".zst", ".zstd"), (b"\x28\xb5\x2f\xfd",)),
)
_SNIFF = 10  # bytes that tell every format above


def compression_of(name: str, head: bytes = b"") -> str | None:
    """The compression a file's name (or, failing that, its first bytes) says it has."""
    low = name.lower()
    for fmt, exts, magics in _COMPRESSED:
        if low.endswith(exts) or (head and head.startswith(magics)):
            return fmt
    return None


def _decompressor(fmt: str, name: str) -> tuple[Any, tuple[type[BaseException], ...]]:
    """The standard library's file class for `fmt`, and the errors it raises on damaged data."""
    try:
        if fmt == "gzip":
            import gzip  # here, not at the top: most logs are plain, and gzip with zlib costs ~1.5 ms
            import zlib

            return (lambda raw: gzip.GzipFile(fileobj=raw)), (zlib.error,)
        if fmt == "xz":
            import lzma

            return lzma.LZMAFile, (lzma.LZMAError,)
        if fmt == "bzip2":
            import bz2

            return bz2.BZ2File, ()
        import compression.zstd as zstd  # type: ignore[import-not-found]  # Python 3.14+

        return zstd.ZstdFile, (zstd.ZstdError,)
    except ImportError:
        how = "Python 3.14 or later" if fmt == "zstd" else f"a Python built with {fmt} support"
        raise InputError(f"{name}: {fmt}-compressed; reading it needs {how} (decompress it first)") from None


def warn(message: str) -> None:
    """A problem with an input that does not stop the run (a truncated archive): one line on stderr."""
    try:
        sys.stderr.write(f"crashlens: warning: {message}\n")
        sys.stderr.flush()
    except (OSError, ValueError):
        pass


class Decompressed:
    """A compressed source read as far as it goes: a cut or damaged archive (a killed job's artifact)
    ends where its data stops, with a warning naming the file, instead of failing the run. An archive
    of which nothing at all can be read (not that format) is an InputError."""

    def __init__(self, raw: BinaryIO, fmt: str, name: str, quiet: bool = False) -> None:
        cls, errors = _decompressor(fmt, name)
        self._raw = raw
        self._fh = cls(raw)
        self._errors = (EOFError, OSError, *errors)
        self._fmt = fmt
        self._name = name
        self._quiet = quiet
        self._done = False
        self._got = 0
        self.stopped: str | None = None  # why it stopped before the end (the warning), if it did

    def _guard(self, op: Callable[[int], bytes], size: int) -> bytes:
        if self._done:
            return b""
        try:
            data = op(size)
        except self._errors as e:
            self._done = True
            detail = str(e) or type(e).__name__
            if self._got == 0 and not isinstance(e, EOFError):
                raise InputError(f"{self._name}: not a readable {self._fmt} file ({detail})") from None
            self.stopped = (f"{self._name}: stopped reading ({self._fmt} data ends early or is damaged after "
                            f"{self._got} bytes: {detail}); using the lines before that")
            if not self._quiet:
                warn(self.stopped)
            return b""
        self._got += len(data)
        return data

    def raw_fileno(self) -> int:
        """The descriptor the compressed bytes are read from (a regular file can be read again; a FIFO not)."""
        return self._raw.fileno()

    def read(self, size: int = -1) -> bytes:
        # In small steps: a read that meets the cut raises, and what it had decoded is lost with it.
        parts: list[bytes] = []
        want = size if size >= 0 else 1 << 62
        while want > 0:
            data = self._guard(self._fh.read1, min(want, 1 << 16))
            if not data:
                break
            parts.append(data)
            want -= len(data)
        return b"".join(parts)

    def readline(self, size: int = -1) -> bytes:
        return self._guard(self._fh.readline, size)

    def close(self) -> None:
        try:
            self._fh.close()
        finally:
            self._raw.close()

    def __enter__(self) -> Decompressed:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


def _stat(name: str) -> os.stat_result:
    try:
        st = os.stat(name)
    except FileNotFoundError:
        raise InputError(f"{name}: no such file") from None
    except PermissionError:
        raise InputError(f"{name}: permission denied") from None
    except OSError as e:
        raise InputError(f"{name}: cannot read ({e.strerror or e})") from None
    if stat.S_ISDIR(st.st_mode):
        raise InputError(f"{name}: is a directory (give log files, or use `crashlens ci DIR`)")
    return st


def check_source(name: str) -> None:
    """Raise the InputError that open_source would, without opening the file: opening a FIFO to look
    at it and closing it again would hand its writer EPIPE."""
    if name == "-":
        return
    st = _stat(name)
    if not os.access(name, os.R_OK):
        raise InputError(f"{name}: permission denied")
    fmt = compression_of(name)
    if fmt is not None and stat.S_ISREG(st.st_mode):
        _decompressor(fmt, name)


def open_source(name: str, quiet: bool = False) -> tuple[Source, BinaryIO]:
    """The source and its bytes, decompressed where it is compressed. A FIFO or character device is
    opened once and read as a stream (`Source.stream`). `quiet`: no warnings (a second reading)."""
    if name == "-":
        fh: BinaryIO = sys.stdin.buffer
        src = Source("<stdin>", None, stream=True)
    else:
        st = _stat(name)
        try:
            fh = open(name, "rb")  # noqa: SIM115 - closed by the caller
        except PermissionError:
            raise InputError(f"{name}: permission denied") from None
        except OSError as e:
            raise InputError(f"{name}: cannot read ({e.strerror or e})") from None
        src = Source(name, name, stream=not stat.S_ISREG(st.st_mode))
    fmt = compression_of(src.name if src.path else "")
    if fmt is None:
        peek = getattr(fh, "peek", None)
        try:
            head = peek(_SNIFF)[:_SNIFF] if peek is not None else b""
        except (OSError, ValueError):
            head = b""
        fmt = compression_of("", head)
    if fmt is None:
        return src, fh
    try:
        wrapped = Decompressed(fh, fmt, src.name, quiet)
    except BaseException:
        if src.path is not None:
            fh.close()
        raise
    return Source(src.name, src.path, src.stream, fmt), wrapped  # type: ignore[return-value]


def decode_line(raw: bytes) -> str:
    """Decode one physical line; CRLF folded, tqdm carriage-return redraws reduced to what a terminal shows."""
    if raw.endswith(b"\n"):
        raw = raw[:-1]
    if raw.endswith(b"\r"):
        raw = raw[:-1]
    if b"\r" in raw:
        # "bar 10%\rbar 20%\rbar 30%": a terminal shows the last non-empty redraw.
        parts = [p for p in raw.split(b"\r") if p.strip()]
        raw = parts[-1] if parts else b""
    if b"\x00" in raw:
        raw = raw.replace(b"\x00", b"")
    return raw.decode("utf-8", "replace")


def iter_raw_lines(fh: BinaryIO) -> Iterator[bytes]:
    """Physical lines as bytes, each at most MAX_LINE_BYTES (the rest of an over-long line is dropped)."""
    readline = fh.readline
    while True:
        chunk = readline(MAX_LINE_BYTES)
        if not chunk:
            return
        if len(chunk) == MAX_LINE_BYTES and not chunk.endswith(b"\n"):
            # Skip the remainder of an over-long line without holding it.
            while True:
                rest = readline(MAX_LINE_BYTES)
                if not rest or rest.endswith(b"\n"):
                    break
        yield chunk


def iter_lines(fh: BinaryIO) -> Iterator[str]:
    for raw in iter_raw_lines(fh):
        yield decode_line(raw)


def decode_physical(line: bytes) -> str:
    """A physical line without its newline, decoded exactly as iter_lines would (capped the same way)."""
    # readline(MAX_LINE_BYTES) keeps the newline when it fits and cuts the line otherwise.
    return decode_line(line + b"\n" if len(line) < MAX_LINE_BYTES else line[:MAX_LINE_BYTES])


def iter_line_chunks(fh: BinaryIO, size: int = 1 << 20) -> Iterator[bytes]:
    """The input as chunks of about `size` bytes, each a run of whole lines ending in a newline.

    A final line without a newline gets one. A line longer than a chunk keeps its first
    MAX_LINE_BYTES (what iter_lines keeps); the rest is dropped unread into memory.
    """
    carry = b""
    dropping = False  # inside an over-long line whose head is already in `carry`
    read = fh.read
    while True:
        data = read(size)
        if not data:
            break
        start = 0
        if dropping:
            start = data.find(b"\n")
            if start < 0:
                continue
            dropping = False
        end = data.rfind(b"\n") + 1
        if end <= start:  # no newline: all of it continues the line in `carry`
            carry += data[start:]
            if len(carry) > MAX_LINE_BYTES:
                carry, dropping = carry[:MAX_LINE_BYTES], True
            continue
        if carry or start or end < len(data):
            # One copy: joining a view costs less than slicing and then concatenating.
            chunk = b"".join((carry, memoryview(data)[start:end]))
        else:
            chunk = data
        carry = data[end:]
        if len(carry) > MAX_LINE_BYTES:
            carry, dropping = carry[:MAX_LINE_BYTES], True
        yield chunk
    if carry:
        yield carry + b"\n"
