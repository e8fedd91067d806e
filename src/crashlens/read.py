"""Bytes in, text lines out: files, gzip files and stdin, read in bounded chunks."""

from __future__ import annotations

import os
import stat
import sys
from collections.abc import Iterator

from ._struct import dataclass
from .errors import UserError

TYPE_CHECKING = False  # typing.TYPE_CHECKING without importing typing (~4 ms of start-up)
if TYPE_CHECKING:
    from typing import BinaryIO

# A line longer than this is cut: a 50 MB single line must not cost 50 MB of memory.
MAX_LINE_BYTES = 64 * 1024


class InputError(UserError):
    """A source the user named cannot be read; the CLI turns it into one line and exit code 2."""


@dataclass(frozen=True, slots=True)
class Source:
    name: str  # what the user typed ("-" for stdin)
    path: str | None  # None for stdin


def open_source(name: str) -> tuple[Source, BinaryIO]:
    if name == "-":
        return Source("<stdin>", None), sys.stdin.buffer
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
    try:
        fh: BinaryIO = open(name, "rb")  # noqa: SIM115 - closed by the caller
    except PermissionError:
        raise InputError(f"{name}: permission denied") from None
    except OSError as e:
        raise InputError(f"{name}: cannot read ({e.strerror or e})") from None
    if name.endswith(".gz"):
        import gzip  # here, not at the top: most logs are plain, and gzip with zlib costs ~1.5 ms

        fh = gzip.GzipFile(fileobj=fh)  # type: ignore[assignment]
    return Source(name, name), fh


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
