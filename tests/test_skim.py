"""The skim step alone (skim.py): of the lines a native locator found, only those that can still change the
result reach the pipeline, and what was judged once is left out natively from then on."""

from __future__ import annotations

import importlib.util
import itertools
import random
import sys

import pytest
from conftest import ROOT

from crashlens.catalog import get_catalog
from crashlens.locate import Locator
from crashlens.pipeline import SourceSession
from crashlens.prefilter import Prefilter, shape
from crashlens.skim import LEARN_AFTER, Skimmer


def _gen_log():
    spec = importlib.util.spec_from_file_location("gen_log", ROOT / "benchmarks" / "gen_log.py")
    assert spec is not None and spec.loader is not None
    mod = importlib.util.module_from_spec(spec)
    sys.modules["gen_log"] = mod
    spec.loader.exec_module(mod)
    return mod


def _setup():
    cat = get_catalog([])
    pf = Prefilter(cat)
    locator = Locator.create(pf.markers)
    if locator is None:
        pytest.skip("crashlens._lines is not built here")
    session = SourceSession("log", cat)
    return pf, locator, session, Skimmer(session, pf, locator)


def _chunk(lines) -> bytes:
    return ("\n".join(lines) + "\n").encode()


def _skim(skimmer: Skimmer, session: SourceSession, chunk: bytes, located) -> list[bytes]:
    """What a scan feeds of a chunk while no record opens: each line the skimmer gives, fed in turn."""
    fed = []
    for _, _, _, line in skimmer.lines(chunk, located, 0):
        fed.append(line)
        session.feed(line.decode())
        skimmer.fed()
        assert not session.extractor.active_streams()
    return fed


def test_repeated_warnings_are_judged_once_then_left_out_natively() -> None:
    """torch's warnings, one of which names an `Error` and a dotted `torch._C...` in passing: the locator
    finds them (they hold markers), the skimmer hands none on (none starts a record), and once the chunk
    is over the locator leaves every line of their shapes out of the next chunk."""
    g = _gen_log()
    pf, locator, session, skimmer = _setup()
    chunk = _chunk(itertools.islice(g.SHAPES["warnings"](random.Random(1)), 3_000))
    first = skimmer.chunk(0, locator(chunk))
    assert first is not None and len(first[1]) > 100  # markers of crashes are in these lines
    assert _skim(skimmer, session, chunk, first) == []
    ahead = locator(chunk)  # located ahead of the scan (locate.py), before the shapes were judged
    assert len(ahead[1]) == len(first[1])
    assert _skim(skimmer, session, chunk, skimmer.chunk(1, ahead)) == []
    again = skimmer.chunk(2, locator(chunk))
    assert again is not None
    assert again[1] == []  # the same lines, now of known shapes: left out in the pass


def test_a_crash_among_known_warnings_is_still_handed_on() -> None:
    """Shapes judged inert never hide a line that starts a record: the crash's first line comes through."""
    g = _gen_log()
    pf, locator, session, skimmer = _setup()
    filler = list(itertools.islice(g.SHAPES["warnings"](random.Random(2)), 2_000))
    assert _skim(skimmer, session, _chunk(filler), skimmer.chunk(0, locator(_chunk(filler)))) == []
    skimmer.chunk(1, None)  # a chunk read another way: the shapes judged are told all the same
    crash = g.sample_lines(g.sample_paths()[0])
    chunk = _chunk([*filler, *crash])
    located = skimmer.chunk(2, locator(chunk))
    assert located is not None and len(located[1]) < 50  # the warnings are left out now
    got = next(skimmer.lines(chunk, located, 0), None)
    assert got is not None and got[3].decode() == crash[[pf.matters(shape(ln.encode())) for ln in crash].index(True)]


def test_start_up_banners_before_any_crash_are_skipped_then_set_apart() -> None:
    """A restart loop's start-up banners begin nothing before a crash of their round (rounds.py): none
    is handed on, the facts they state retire their markers, and from the next chunk on the locator sets
    lines of the banners' shapes apart instead of handing them over one by one."""
    g = _gen_log()
    pf, locator, session, skimmer = _setup()
    cat = session.cat
    chunk = _chunk([*g.HEADER, *itertools.islice(g.SHAPES["startup"](random.Random(4)), 30_000)])
    markers_before = set(pf.markers)
    located = skimmer.chunk(0, locator(chunk))
    fed = _skim(skimmer, session, chunk, located)
    banner_lines = [ln for ln in chunk.split(b"\n") if any(b.trigger.encode() in ln for b in cat.banners)]
    assert len(banner_lines) > 20  # the loop does restart, many times
    # The launches' lines state the facts: in a log's first chunk they are worked out after LEARN_AFTER
    # such lines (a small log's fact patterns are compiled only if it crashes), then nothing is fed.
    assert len(fed) <= LEARN_AFTER + 2 * len(g.HEADER) < len(banner_lines) // 2, (len(fed), len(banner_lines))
    skimmer.chunk(1, None)
    again = skimmer.chunk(2, locator(chunk))
    assert again is not None
    assert set(pf.markers) < markers_before  # the facts' markers retired
    assert len(again[3]) > 20 and len(again[1]) < len(located[1])  # banners set apart, fewer handed over
    assert _skim(skimmer, session, chunk, again) == []
