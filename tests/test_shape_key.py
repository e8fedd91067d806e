"""crashlens._lines.shape_key: the key of a line's shape that the native pass compares with the shapes
judged already (Locator.known). The pass computes it for every line it finds, 64 bytes at a time where
the CPU has AVX-512; the plain C loop must give the same keys, and a key must tell apart lines whose
shapes differ in one 8-byte word."""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from crashlens.prefilter import shape

_lines = pytest.importorskip("crashlens._lines")

# Digits, letters, the control characters and the ones framing keeps (tab, CR, newline), bytes >= 0x80
# whose low 7 bits are digits or controls: what the byte-wise arithmetic must get right.
BYTES = b"0123456789aZ:_ .\t\r\n\x00\x01\x1b\x1f\x7f\x80\x90\xb0\xb9\xc3\xff"
lines = st.lists(st.sampled_from(BYTES), max_size=300).map(bytes) | st.binary(max_size=300)


@settings(max_examples=2000, deadline=None)
@given(lines)
def test_every_loop_gives_the_same_key(line: bytes) -> None:
    assert _lines.shape_key(line) == _lines.shape_key(line, True)


@settings(max_examples=1000, deadline=None)
@given(lines)
def test_the_key_is_the_key_of_the_shape(line: bytes) -> None:
    digits_zeroed = bytes(0x30 if 0x30 <= b <= 0x39 else b for b in line)
    assert _lines.shape_key(line) == _lines.shape_key(digits_zeroed)
    if not any(b < 0x20 and b not in b"\t\n\r" or b == 0x7F for b in line):
        assert _lines.shape_key(line) == _lines.shape_key(shape(line))


@settings(max_examples=1000, deadline=None)
@given(line=st.binary(min_size=1, max_size=300), at=st.integers(0, 299), to=st.sampled_from(b"aQ_ :\x80"))
def test_shapes_that_differ_in_one_word_have_different_keys(line: bytes, at: int, to: int) -> None:
    at %= len(line)
    other = line[:at] + bytes([to]) + line[at + 1:]
    if shape(other) != shape(line):
        assert _lines.shape_key(other) != _lines.shape_key(line)
