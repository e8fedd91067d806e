"""Locator.read_file reads and locates each byte range in one native call (Finder.read_range) where it
can: the chunks and their lines of interest must be exactly those of the Python reads it replaces
(boundaries probed with os.pread, the range read into a pooled buffer, then Finder.locate)."""

from __future__ import annotations

import os

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from crashlens.catalog import get_catalog
from crashlens.locate import Locator
from crashlens.prefilter import Prefilter

_lines = pytest.importorskip("crashlens._lines")
if not hasattr(_lines, "Finder") or not hasattr(_lines.Finder, "read_range") or not hasattr(os, "preadv"):
    pytest.skip("no native range reader here", allow_module_level=True)

MARKERS = Prefilter(get_catalog([])).markers


def _both() -> tuple[Locator, Locator]:
    native, python = Locator.create(MARKERS, fused=True), Locator.create(MARKERS, fused=True)
    assert native is not None and python is not None and native.read_range is not None
    python.read_range = None
    return native, python


def _read(locator: Locator, path: str, chunk: int, known: list[int] = ()) -> list[tuple[bytes, tuple]]:
    locator.known(known)
    fd = os.open(path, os.O_RDONLY)
    try:
        return [(bytes(c), located) for c, located in locator.read_file(fd, os.fstat(fd).st_size, chunk)]
    finally:
        os.close(fd)


pieces = st.one_of(
    st.sampled_from([b"\n", b"\n", b"\n", b"Traceback (most recent call last):", b'  File "a.py", line 3',
                     b"torch._dynamo.exc.Unsupported: x", b"ValueError: v", b"\x1b[31m", b"\r", b" ok "]),
    st.integers(1, 3000).map(lambda k: b"x" * k),  # lines longer than the small chunks below, some far longer
    st.binary(max_size=8),
)


@settings(max_examples=150, deadline=None,
          suppress_health_check=[HealthCheck.too_slow, HealthCheck.function_scoped_fixture])
@given(parts=st.lists(pieces, max_size=80), chunk=st.sampled_from([7, 97, 512, 4096, 1 << 16]))
def test_native_range_reads_equal_the_python_reads(tmp_path, parts, chunk) -> None:
    path = str(tmp_path / "log")
    with open(path, "wb") as fh:
        fh.write(b"".join(parts))
    native, python = _both()
    # More than two chunks, so that the ranges are read by the workers, into pooled buffers.
    want = _read(python, path, chunk)
    assert _read(native, path, chunk) == want
    # With known shapes left out in the pass.
    keys = sorted({native.shape_key(ln) for ln in b"".join(parts).split(b"\n")[::3]})
    assert _read(native, path, chunk, keys) == _read(python, path, chunk, keys)


def test_a_recorded_log_cut_into_ranges(tmp_path) -> None:
    from conftest import SAMPLES

    data = b"".join(p.read_bytes() for p in sorted(SAMPLES.glob("*.log"))[:12])
    path = str(tmp_path / "log")
    with open(path, "wb") as fh:
        fh.write(data + b"no newline at the end")
    native, python = _both()
    for chunk in (1000, 1 << 14, 1 << 16):
        got = _read(native, path, chunk)
        assert got == _read(python, path, chunk)
        assert b"".join(c for c, _ in got) == data + b"no newline at the end\n"
