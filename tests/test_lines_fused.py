"""crashlens._lines.Finder: the one-pass search gives exactly what the two passes give.

The two passes are ahocorasick_rs (the marker offsets) and _lines.lines_of_interest (lines, control
characters, dotted names); a pure-Python oracle checks both on small chunks. Every loop this machine
has (_lines.PATHS: AVX-512, AVX2, portable) is run on every chunk.
"""

from __future__ import annotations

import re
from functools import lru_cache

import pytest
from conftest import SAMPLES
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from crashlens.catalog import get_catalog
from crashlens.prefilter import Prefilter

_lines = pytest.importorskip("crashlens._lines")
ac = pytest.importorskip("ahocorasick_rs")
if not hasattr(_lines, "Finder"):
    pytest.skip("crashlens._lines was built without Finder", allow_module_level=True)

# The markers the app searches for (prefilter anchors); the cases below name some of them.
MARKERS = list(Prefilter(get_catalog([])).markers)
# (each found by a marker that is part of it: the frame rule's `File ` finds every `File "`)
assert all(any(m in lit for m in MARKERS) for lit in (b"Traceback", b"File \"", b"Error"))
CONTROLS = bytes([*range(0x09), 0x0B, 0x0C, *range(0x0E, 0x20), 0x7F])
DOTTED = re.compile(rb"\.(?:[A-Z]|_[A-Z])")


@lru_cache(maxsize=64)
def searcher(markers: tuple[bytes, ...]):
    return ac.BytesAhoCorasick(list(markers), matchkind=ac.MATCHKIND_LEFTMOST_LONGEST)


@lru_cache(maxsize=64)
def finder(markers: tuple[bytes, ...]):
    return _lines.Finder(list(markers))


def two_pass(markers: list[bytes], chunk: bytes | bytearray | memoryview) -> tuple[int, list[int], list[int]]:
    """What locate.Locator does today: ahocorasick_rs's offsets handed to lines_of_interest."""
    offsets = [m[1] for m in searcher(tuple(markers)).find_matches_as_indexes(bytes(chunk))]
    return _lines.lines_of_interest(chunk, offsets)


def oracle(markers: list[bytes], chunk: bytes) -> tuple[int, list[int], list[int]]:
    """The same, line by line in Python."""
    indices, starts, start = [], [], 0
    for index, line in enumerate(chunk.split(b"\n")):
        if (any(m in line for m in markers) or any(c in CONTROLS for c in line)
                or DOTTED.search(line)):
            indices.append(index)
            starts.append(start)
        start += len(line) + 1
    return chunk.count(b"\n"), indices, starts


def every_loop(markers: list[bytes], chunk) -> dict[str, tuple[int, list[int], list[int]]]:
    f = finder(tuple(markers))
    got = {"default": f.locate(chunk), "portable=True": f.locate(chunk, portable=True)}
    for path in _lines.PATHS:
        got[path] = f.locate(chunk, path=path)
    return got


def check(markers: list[bytes], chunk: bytes | bytearray | memoryview) -> tuple[int, list[int], list[int]]:
    """Every loop's result equals the two passes' (and the oracle's on small chunks); returns it."""
    want = two_pass(markers, chunk)
    if len(chunk) <= 1 << 16:
        assert oracle(markers, bytes(chunk)) == want
    for loop, got in every_loop(markers, chunk).items():
        assert got == want, loop
    return want


def test_paths():
    assert _lines.PATHS[-1] == "portable"
    assert isinstance(_lines.HAVE_AVX2, bool)
    assert ("avx2" in _lines.PATHS) == _lines.HAVE_AVX2
    with pytest.raises(ValueError):
        _lines.Finder([b"x"]).locate(b"x", path="no-such-loop")


# -- property test ------------------------------------------------------------------------------

# Marker bytes that make hits and near misses likely: letters that share nibbles with one another,
# '_', '.', control bytes and bytes >= 0x80 (which the SIMD loops treat specially).
MARKER_BYTES = b"abAB_.:J\x00\x01\x7f\x80\x8a\xc3\xff "

random_markers = st.lists(
    st.binary(min_size=1, max_size=7).map(lambda b: bytes(MARKER_BYTES[x % len(MARKER_BYTES)] for x in b)),
    min_size=1, max_size=12,
)
real_markers = st.lists(st.sampled_from(MARKERS), min_size=1, max_size=len(MARKERS), unique=True)


@st.composite
def cases(draw) -> tuple[list[bytes], bytes]:
    markers = draw(st.one_of(real_markers, random_markers))
    pieces = st.one_of(
        st.sampled_from(markers),
        st.sampled_from(markers).flatmap(lambda m: st.integers(1, len(m)).map(lambda k: m[:k])),  # cut short
        st.sampled_from(markers).flatmap(lambda m: st.integers(0, len(m) - 1).map(lambda k: m[k:])),
        st.sampled_from(markers).map(lambda m: b"\n" + m),  # a line that starts with a marker
        st.sampled_from([b"\n", b"\n", b".", b"._", b"A", b"Z", b"_", b"a", b" ", b"\t", b"\r", b"\xe2\x96\x88"]),
        st.sampled_from([bytes([c]) for c in CONTROLS]),
        st.binary(max_size=6),
        st.integers(1, 90).map(lambda k: b"x" * k),  # filler: pushes the rest across block boundaries
    )
    chunk = b"".join(draw(st.lists(pieces, max_size=60)))
    return markers, chunk


@settings(max_examples=600, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(cases())
def test_same_as_two_passes(case):
    markers, chunk = case
    check(markers, chunk)


# -- edge cases ---------------------------------------------------------------------------------


def test_empty_chunk():
    assert check(MARKERS, b"") == (0, [], [])
    assert check([b"a"], b"") == (0, [], [])


@pytest.mark.parametrize("marker", [b"Traceback", b"This call originates from:", b"_args={"])
def test_marker_across_block_boundaries(marker):
    # Every start from 0 to 200 puts the marker across the 32- and 64-byte boundaries (and in the tail).
    for at in range(200):
        chunk = b"x" * at + marker + b" y\n" + b"z" * 150 + b"\n"
        assert check(MARKERS, chunk) == (2, [0], [0]), at
        if at:
            chunk = b"x" * (at - 1) + b"\n" + marker + b"\n" + b"q" * 100
            assert check(MARKERS, chunk) == (2, [1], [at]), at


def test_marker_at_the_start_and_the_end():
    assert check(MARKERS, b"Traceback\n") == (1, [0], [0])
    for lines in range(40):
        body = b"ok\n" * lines
        # the last bytes, with no newline after them
        assert check(MARKERS, body + b"a Traceback") == (lines, [lines], [3 * lines])
        # cut off by the chunk's end: no match
        assert check(MARKERS, body + b"a Traceba") == (lines, [], [])
        assert check(MARKERS, body + b"vLL") == (lines, [], [])


def test_consecutive_lines():
    # Each line of interest right after another, its hit on its first byte: the scan skips the rest of
    # a line once it is found, and must not skip into the next one.
    lines = [b"Error", b"Error", b"\x01", b".Ab", b"._X", b"File \"", b"zz", b"Traceback", b"_args={"]
    for at in range(140):
        chunk = b"x" * at + b"\n".join(lines) + b"\n"
        starts = [0] + [at + sum(len(x) + 1 for x in lines[:k]) for k in range(1, len(lines))]
        assert check(MARKERS, chunk) == (9, [0, 1, 2, 3, 4, 5, 7, 8], starts[:6] + starts[7:]), at


def test_newline_let_through():
    # The SIMD filters may flag a newline: the AVX-512 one looks bytes up by their low 7 bits, so a
    # marker starting with 0x8a flags every "\n" followed by its second byte. That must not skip the
    # next line.
    for at in range(70):
        chunk = b"x" * at + b"Error\nyy Error\n" + b"z" * 70 + b"\ny\n"
        assert check([b"\x8ay", b"Error"], chunk) == (4, [0, 1], [0, at + 6]), at


def test_dotted_names_and_controls_at_edges():
    for at in range(140):
        pad = b"x" * at
        assert check(MARKERS, pad + b".Ab\n")[1] == [0]
        assert check(MARKERS, pad + b"._Ab\n")[1] == [0]
        assert check(MARKERS, pad + b"._ab\n")[1] == []
        assert check(MARKERS, pad + b".a\n")[1] == []
        assert check(MARKERS, pad + b".\nA")[1] == []
        assert check(MARKERS, pad + b"\x1b[0m\n")[1] == [0]
        assert check(MARKERS, pad + b"\t\r\n")[1] == []
        # at the very end of the chunk: the lookahead stops there
        assert check(MARKERS, pad + b"._")[1] == []
        assert check(MARKERS, pad + b"._A")[1] == [0]
        assert check(MARKERS, pad + b".")[1] == []
        assert check(MARKERS, pad + b"\x7f")[1] == [0]


def test_short_markers():
    for markers in ([b"a"], [b"ab"], [b"ab", b"Traceback"], [b"\xc3", b"_"], [b"\x01\x02"]):
        for at in range(0, 130, 7):
            check(markers, b"x" * at + b"ab\n" + b"y" * 70 + b"\n" + b"\xc3_" + b"z" * at + b"ab")
    assert check([b"ab"], b"x" * 70 + b"\na") == (1, [], [])
    assert check([b"ab"], b"x" * 70 + b"\nab") == (1, [1], [71])


def test_long_line():
    line = b"y" * (3 << 20)
    assert check(MARKERS, line + b" Traceback" + b"y" * 10) == (0, [0], [0])
    assert check(MARKERS, b"a\n" + line + b"Error\n") == (2, [1], [2])
    assert check(MARKERS, b"a\n" + line + b"\n") == (2, [], [])


def test_buffer_types():
    chunk = (b"ok\n" * 30 + b"x Traceback y\n" + b"z" * 80 + b".Foo\n") * 3 + b"tail Error"
    want = two_pass(MARKERS, chunk)
    assert want[1] == [30, 31, 62, 63, 94, 95, 96]
    f = _lines.Finder(MARKERS)
    for variant in (bytearray(chunk), memoryview(chunk), memoryview(b"--" + chunk)[2:]):
        assert check(MARKERS, variant) == want
        assert f.locate(variant) == want
    with pytest.raises(BufferError):
        f.locate(memoryview(chunk)[::2])
    with pytest.raises(TypeError):
        f.locate("Traceback")


def test_invalid_markers():
    for bad in ([], [b""], [b"a\nb"], [b"\n"], [b"ok"] * 129, [b"ok", b""]):
        with pytest.raises(ValueError):
            _lines.Finder(bad)
    for bad in (["Traceback"], [b"ok", 3], b"ok", 3):
        with pytest.raises(TypeError):
            _lines.Finder(bad)
    _lines.Finder([b"m%d" % k for k in range(128)])  # 128 is allowed
    _lines.Finder((b"tuple", b"works"))


def test_many_markers():
    markers = [b"m%03d_" % k for k in range(128)]
    chunk = b"".join(b"line %d m%03d_\n" % (k, k) + b"filler " * 12 + b"\n" for k in range(0, 128, 3))
    assert check(markers, chunk)[1] == list(range(0, 86, 2))


def test_samples():
    logs = sorted(SAMPLES.glob("*.log"))
    assert logs
    for log in logs:
        data = log.read_bytes()
        whole = check(MARKERS, data)
        assert whole[0] == data.count(b"\n")
        # chunks cut anywhere (not at line ends) too
        for at in range(0, len(data), 4093):
            check(MARKERS, data[at:at + 4093])
