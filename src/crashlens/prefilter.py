"""Which lines of a big log can matter: a cheap test that lets the per-line pipeline skip the rest.

A line is skipped only while every rank stream of the RecordExtractor is idle, and only if it cannot
- start a record: every way RecordExtractor's idle state starts one needs a marker below in the line
  (RECORD_START_MARKERS, one row per branch of traceback._Stream._idle), or a dotted exception name
  (`torch.fx.Foo: ...`, DOTTED_NAME); a line (shape) that holds one is then fed to a fresh
  RecordExtractor once, to see whether it really starts one (`starts_record`);
- give a start-up fact that is not known yet: a fact rule sets its facts only from a line its pattern
  matches, and every match holds one of the pattern's covering literals (literals.covering_literals;
  the rule's `trigger` where the pattern has none). Facts are first-value-wins, so once every fact a
  rule sets is known the rule's lines can change nothing: `retire` drops its markers, and the scan
  goes on looking for fewer (a restart loop prints the same start-up lines round after round);
- begin a round: a start-up banner (rounds.py) holds its catalog `trigger` string; banners are kept
  looked for every time (a restart loop prints one per round), but a banner begins a round only after
  a crash of the current one, so a line that matters only as a banner (`banner_only`) is skipped while
  the round has had none;
- change which stream a later unprefixed line goes to: pipeline.scan_located feeds the last skipped
  line that carries a rank or a prefix before it feeds anything else.
Framing only removes text from a line (prefixes, carriage-return redraws) unless the line holds
control characters, so such lines are always kept. Shapes have their digits zeroed, and so have the
markers they are tested against (a line holding `torch 2.` has a shape holding `torch 0.`): the log's
many boring lines then collapse to a few shapes, each tested once. tests/test_scale.py checks the
markers against every line of the recorded samples.

Markers come in two classes: those that are always searched for (record starts, and `keep`: a marker
of a line that must reach the pipeline every time it appears, such as the banner that starts a new
round of a restart loop), and fact markers, which retire with their facts.

A native locator (locate.py) looks for each marker by its anchor (a part of it, see `anchor`), which
finds every line the marker finds and maybe a few more, for a whole chunk at once; the pipeline then
judges each line it found by its shape, against the markers themselves. Shapes alone are what the
pipeline uses where the native parts are missing and while a record is open.
"""

from __future__ import annotations

from collections.abc import Iterable

from . import recache
from .catalog import Catalog, covering_literals_of
from .frame import MIN_JOINED, frame_line, frame_physical
from .read import decode_physical
from .records import LogLine
from .traceback import RECORD_START_MARKERS, RecordExtractor

# _EXC_FREE's dotted alternative `(?:[a-z_]\w*\.)+_?[A-Z]\w*` needs a dot then `_?[A-Z]`.
DOTTED_NAME = recache.compile(rb"\._?[A-Z]")
# Characters strip_controls removes from inside a line (tab, newline and carriage return aside).
_CONTROLS = bytes([*range(0x09), 0x0B, 0x0C, *range(0x0E, 0x20), 0x7F])
_DIGITS = b"0123456789"
# A line's shape: every digit becomes 0 and every control character NUL. The markers hold no digits,
# and frame.py's prefix patterns treat all digits alike, so a shape tells both whether the line may
# matter and how RecordExtractor routes it (up to the digits of the rank); a server's many boring
# lines come in a few hundred shapes, each looked at once.
_SHAPE = bytes(0 if b in _CONTROLS else 0x30 if b in _DIGITS else b for b in range(256))
CONTROL_MARK = b"\x00"  # what every control character is in a shape
_ZERO_DIGITS = str.maketrans("0123456789", "0000000000")
MAX_SHAPES = 1 << 16  # shapes remembered; a log of unique lines must not grow memory
MAX_MARKERS = 128  # what _lines.c's Finder takes

_UNSEEN = object()

# Where RecordExtractor routes a line (traceback.RecordExtractor._route): its rank, "" for a prefixed
# line without one, and for an unprefixed line (None) the stream whose record it continues.
RouteKey = str | None


def minimal_cover(literals: Iterable[bytes]) -> tuple[bytes, ...]:
    """Drop every literal that contains another: the shorter one already finds its lines."""
    uniq = sorted(set(literals), key=len)
    kept: list[bytes] = []
    for lit in uniq:
        if not any(k in lit for k in kept):
            kept.append(lit)
    return tuple(kept)


def shape(line: bytes) -> bytes:
    return line.translate(_SHAPE)


# Bytes a literal's anchor does not start with: lowercase letters, spaces and the punctuation of
# `key: value` text are the commonest bytes of a log.
_COMMON_LEAD = frozenset(b" :-/.")


def anchor(literal: bytes, shortest: int = 5) -> bytes:
    """The literal, or its longest tail of at least `shortest` bytes that starts with neither a
    lowercase letter, a space nor one of `:-/.`. Any part of a marker finds the marker's lines (and
    maybe a few more); SIMD searchers such as the one in locate.py test the first bytes of each literal
    at every position, and common bytes make that test pass most often: `server_args=` searched as
    `_args=` ran 2.5 times faster on a server log, and with `: [ERROR]` searched as `[ERROR]` (`: ` is
    in most lines) the whole pass over a 300 MB server log took half the time."""
    if literal[:1].islower() or literal[:1] and literal[0] in _COMMON_LEAD:
        for i in range(1, len(literal) - shortest + 1):
            c = literal[i]
            if not (97 <= c <= 122) and c not in _COMMON_LEAD:
                return literal[i:]
    return literal


def zero_digits(text: str) -> str:
    return text.translate(_ZERO_DIGITS)


def route_key(line: LogLine) -> RouteKey:
    if line.rank is not None:
        return line.rank
    return "" if line.prefixed else None


def starts_record(line: LogLine, text: str | None = None) -> bool:
    """Whether a framed line starts a record (or a skipped block) in a stream with no record open.
    `text`: the physical line it was framed from; a long one may hold several lines (newlines lost,
    frame.frame_physical), and any of them may start one."""
    ex = RecordExtractor()
    lines = [line] if text is None or len(text) < MIN_JOINED else frame_physical("", 0, text)
    return any(ex.feed(ln) for ln in lines) or bool(ex.active_streams())


class Prefilter:
    """Shapes of lines: which may matter, and the (digit-zeroed) key each is routed by."""

    def __init__(self, cat: Catalog, keep: Iterable[bytes] = ()) -> None:
        self._keep = tuple(keep)
        # A start-up banner begins the next round after a crash (rounds.py), even where its facts are known.
        banners = tuple(b.trigger.encode("utf-8") for b in cat.banners)
        self._always = (*RECORD_START_MARKERS, *self._keep, *banners)
        # (the facts a rule sets, the markers of the lines it can set them from), one per fact rule
        self._facts: list[tuple[frozenset[str], tuple[bytes, ...]]] = []
        self._triggers: list[tuple[frozenset[str], tuple[bytes, ...]]] = []
        for r in cat.facts:
            keys = frozenset(k for k, _ in r.sets)
            cover = covering_literals_of(r.pattern.source)
            trigger = (r.trigger.encode("utf-8"),)
            self._facts.append((keys, tuple(c.encode("ascii") for c in cover) or trigger))
            self._triggers.append((keys, trigger))
        self._banners = banners
        # Per shape, judged when first asked: its route key (framing alone), and whether it may matter
        # (the markers, maybe a fresh RecordExtractor: ~40 us a shape), which a line that is fed anyway
        # (a line of the open record) is never asked.
        self._routes: dict[bytes, RouteKey] = {}
        self._matters: dict[bytes, bool] = {}
        self._matter: set[bytes] = set()
        self.banner_only: set[bytes] = set()  # shapes that matter only as a round's start-up banner
        self._known: frozenset[str] = frozenset()
        self._aim()

    def _aim(self) -> None:
        live = [(found, trigger) for (keys, found), (_, trigger) in zip(self._facts, self._triggers)
                if not keys <= self._known]
        # Too many markers for the native locator: the rules with the most strings in their covers
        # are looked for by their triggers instead (fewer, broader markers), one rule at a time.
        live.sort(key=lambda ft: len(ft[0]))
        for broad in range(len(live) + 1):
            chosen = [m for k, (found, trigger) in enumerate(live)
                      for m in (trigger if k >= len(live) - broad else found)]
            whole = minimal_cover((*self._always, *chosen))
            # What a native locator looks for: the anchors, which find every line the markers find
            # and a few more; a line's shape is then judged by the markers themselves.
            self.markers = minimal_cover(anchor(m) for m in whole)
            if len(self.markers) <= MAX_MARKERS:
                break
        self._shape_markers = minimal_cover(m.translate(_SHAPE) for m in whole)
        # The same without the banners: what a line must hold to matter where a banner can begin nothing.
        self._shape_markers_nb = minimal_cover(
            m.translate(_SHAPE) for m in (*RECORD_START_MARKERS, *self._keep, *chosen))
        # Of those, the ones that matter only if the line starts a record (see may_matter)
        self._record_markers = {m.translate(_SHAPE) for m in RECORD_START_MARKERS} - {
            m.translate(_SHAPE) for m in (*self._keep, *(m for keys, found in self._facts
                                                         if not keys <= self._known for m in found))}
        self._matters.clear()  # (route keys do not depend on the markers)
        self._matter.clear()
        self.banner_only.clear()

    def retire(self, known: Iterable[str]) -> bool:
        """Stop looking for the lines of fact rules whose every fact is known (first value wins, so
        they can change nothing). True if the markers changed: a native locator should be given the
        new ones (Locator.retarget). Facts must only ever be added: lines located (and shapes judged)
        with fewer markers are not looked at again, so a caller that starts its facts afresh (per
        launch of the server, say) must not retire them."""
        known = frozenset(known)
        if known == self._known:
            return False
        before = self.markers
        self._known = known
        self._aim()
        return self.markers != before

    def may_matter(self, shape: bytes, line: LogLine | None = None, markers: tuple[bytes, ...] | None = None) -> bool:
        """Whether a line of this shape may change the result. A line whose only markers are record
        markers (or a dotted name) matters only if it starts a record: a warning that names an
        `Error` or a `torch.Tensor` in passing, printed a million times, is looked at once. (Whether
        a line starts a record does not depend on its digits: tests/test_scale.py checks it on every
        recorded line.)"""
        if CONTROL_MARK in shape:
            return True
        hit = False
        for m in self._shape_markers if markers is None else markers:
            if m in shape:
                if m not in self._record_markers:
                    return True  # a fact still unknown, or a line to keep every time
                hit = True
        if not hit and DOTTED_NAME.search(shape) is None:
            return False
        text = decode_physical(shape)
        return starts_record(line if line is not None else frame_line("", 0, text), text)

    def info(self, shape: bytes) -> tuple[bool, RouteKey]:
        """(may matter, route key with digits zeroed) of one shape; the key is meaningless for a shape
        with control characters (framing strips them), but such a line always matters."""
        return self.matters(shape), self.route(shape)

    def route(self, shape: bytes) -> RouteKey:
        """The route key (digits zeroed) of a line of this shape."""
        got = self._routes.get(shape, _UNSEEN)
        if got is _UNSEEN:
            got = self._routes[shape] = route_key(frame_line("", 0, decode_physical(shape)))
        return got  # type: ignore[return-value]

    def matters(self, shape: bytes) -> bool:
        """Whether a line of this shape may matter (may_matter, judged once per shape)."""
        got = self._matters.get(shape)
        if got is None:
            line = frame_line("", 0, decode_physical(shape))
            got = self._matters[shape] = self.may_matter(shape, line)
            if got:
                self._matter.add(shape)
                if not self.may_matter(shape, line, self._shape_markers_nb):
                    self.banner_only.add(shape)
        return got

    def shapes(self, chunk: bytes) -> tuple[list[bytes], set[bytes]]:
        """(shape of each line and b"" for the end, the distinct shapes) of a chunk of whole lines."""
        shapes = chunk.translate(_SHAPE).split(b"\n")
        present = set(shapes)
        if len(self._routes) + len(present) > MAX_SHAPES:
            self._routes.clear()
            self._matters.clear()
            self._matter.clear()
            self.banner_only.clear()
        return shapes, present

    def hits(self, shapes: list[bytes], present: set[bytes] | None = None, start: int = 0) -> list[int]:
        """Indices of the lines from `start` on that may matter; `present`: the distinct shapes of
        shapes[start:], if known."""
        distinct = present if present is not None else set(shapes[start:])
        keep = {sh for sh in distinct if self.matters(sh)}
        return [i for i, sh in enumerate(shapes[start:], start) if sh in keep] if keep else []

    def chunk(self, chunk: bytes) -> tuple[list[bytes], set[bytes], list[int]]:
        """(shape of each line and b"" for the end, the distinct shapes, indices of lines that may matter)
        of a chunk of whole lines."""
        shapes, present = self.shapes(chunk)
        return shapes, present, self.hits(shapes, present)
