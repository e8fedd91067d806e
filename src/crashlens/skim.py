"""Which natively located lines of a source reach the pipeline, and what the native locator is told to leave out."""

from __future__ import annotations

from bisect import bisect_left
from collections.abc import Iterator

from .context import FactCollector
from .locate import Located, Locator
from .prefilter import Prefilter, shape

TYPE_CHECKING = False  # typing.TYPE_CHECKING without importing typing (~4 ms of start-up)
if TYPE_CHECKING:
    from .pipeline import SourceSession

# Lines holding a fact rule's trigger a scan feeds from its first chunk before it works its facts out at
# once (Skimmer.fed): a small log's fact patterns are compiled (and `regex` imported) only if it crashes,
# and its start-up block is a few dozen such lines; a restart loop's first 2 MB hold ~400.
LEARN_AFTER = 64
# Shapes of lines that cannot matter a native locator is told to leave out (bounded: a log of unique
# lines must not grow memory, nor the locator's table).
MAX_KNOWN_SHAPES = 1 << 14
# Shapes of start-up banners a native locator is told to set apart (a restart loop has one or a few).
MAX_BANNER_SHAPES = 256
# Located lines of a chunk judged not to matter, one by one, before its remaining located lines are
# filtered natively with every shape judged so (Skimmer.lines): a chunk located ahead of the scan, before
# its lines' shapes were judged, would hand them to Python one by one (the warnings benchmark's first five
# 2 MB chunks held 3,500 such lines each).
REFILTER = 32


class Skimmer:
    """The skim step of one source read in located chunks (pipeline.scan_located), while no record is
    open: of a chunk's located lines, the ones that can still change the result, in order.

    What it learns as it goes narrows what later chunks hand over, here and in the native locator:
    - a located line that cannot matter (its marker retired since, or a record marker in a line that
      starts no record) gives its shape key to the locator, which leaves lines of that shape out
      (Locator.known);
    - a line that matters only as a start-up banner is skipped until the round has had a crash, and the
      locator sets lines of its shape apart (Locator.aside);
    - once every fact a fact rule sets is known, its markers are retired (Prefilter.retire) and the
      locator is given the rest; a new round that knows fewer facts brings them back, and forgets the
      shapes judged inert without them.
    """

    def __init__(self, session: SourceSession, pf: Prefilter, locator: Locator | None) -> None:
        self.session = session
        self.pf = pf
        self.locator = locator
        self.inert: set[int] = set()  # shape keys (Locator.shape_key) of located lines that cannot matter
        self.told = 0  # how many of them the locator has been given (-1: forgotten since)
        # The current chunk's located lines as last filtered natively (indices, starts, len(inert) then);
        # None: as located. Forgotten with the inert shapes (a new round).
        self.narrowed: tuple[list[int], list[int], int] | None = None
        self.banners: dict[int, bytes] = {}  # shape key -> shape of located lines that matter only as a banner
        self.banners_told: frozenset[int] = frozenset()  # the keys the locator sets apart
        self.aside_ok: dict[frozenset[int], bool] = {}  # keys a chunk was located with -> may its lines stay apart
        self.shapes_of: dict[int, bytes] = {}  # every banner key given to the locator -> its shape
        self.learning = False  # from the second chunk on (see LEARN_AFTER for the first)
        self.noted = 0  # lines fed that held a fact rule's trigger (see fed)
        self.known_then = 0  # facts known when the markers were last narrowed
        self.known_in: FactCollector | None = None  # the round's collector known_then counts the facts of
        self.known_keys: frozenset[str] = frozenset()  # the facts the markers were last narrowed with

    def chunk(self, index: int, located: Located | None) -> Located | None:
        """Begin chunk `index` of the source; the located lines to skim it with (None: not located)."""
        if index:
            self.narrow()
        if located is None:
            return None
        self.narrowed = None
        return self.apart(located)

    def lines(self, chunk: bytes, located: Located, i: int) -> Iterator[tuple[int, int, int, bytes]]:
        """The lines of interest of a located chunk from line i on that may matter, as (index, start,
        end, line), in order; the caller feeds each, and stops when a record opens. `located`'s lines
        set aside are start-up banners, looked at only while the round has had a crash."""
        pf, locator, inert, rounds = self.pf, self.locator, self.inert, self.session.rounds
        assert rounds is not None
        n, aside, aside_starts = located[0], located[3], located[4]
        narrowed = self.narrowed
        indices, starts = (located[1], located[2]) if narrowed is None else (narrowed[0], narrowed[1])
        x, pos = bisect_left(indices, i), i  # the next line of interest; the line after the last looked at
        skipped, applied = 0, -1 if narrowed is None else narrowed[2]
        while True:
            h = indices[x] if x < len(indices) else n
            y = bisect_left(aside, pos) if aside and rounds.crashed else len(aside)
            if y < len(aside) and aside[y] < h:
                h, start = aside[y], aside_starts[y]  # the first banner after a crash: a new round
            elif h < n:
                start = starts[x]
                x += 1
            else:
                return
            pos = h + 1
            end = chunk.index(b"\n", start)
            line = bytes(chunk[start:end])
            sh = shape(line)
            if not pf.matters(sh):
                # Located by a marker that cannot make it matter (retired since, or one that only
                # matters in a line that starts a record): skipped like any other line, and the
                # locator leaves lines of this shape out from now on.
                if locator is not None and len(inert) < MAX_KNOWN_SHAPES:
                    inert.add(locator.shape_key(line))
                    skipped += 1
                    # Many such lines: the rest of the chunk was located before their shapes were
                    # judged. Filter it natively with every shape judged inert by now: at most once per
                    # REFILTER lines skipped and per sixteenth of the lines left, so the native work
                    # is at most 16 lines a line skipped here (each ~40 times cheaper than in Python).
                    if skipped >= REFILTER and len(inert) != applied and 16 * skipped >= len(indices) - x:
                        indices, starts = locator.drop_known(chunk, indices[x:], starts[x:], inert)
                        x, skipped, applied = 0, 0, len(inert)
                        self.narrowed = (indices, starts, applied)
                continue
            if sh in pf.banner_only:
                if locator is not None and len(self.banners) < MAX_BANNER_SHAPES:
                    self.banners.setdefault(locator.shape_key(line), sh)
                if not rounds.crashed:
                    # A start-up banner begins a round only after a crash of this one (rounds.py; no
                    # record is open while skimming): a restart loop's banners before any crash change
                    # nothing. The locator sets lines of this shape apart from now on, and only the
                    # first of them after a crash is looked at.
                    continue
            yield h, start, end, line

    def fed(self) -> None:
        """A line was fed to the session: if it held a fact rule's trigger, work the facts out now
        (from the second chunk on, or past LEARN_AFTER such lines): a restart loop prints ~200 launches
        a 2 MB chunk, and each of their start-up banners, which stated the round's facts again, was fed
        with the line before it to the end of the chunk (the 300 MB start-up benchmark fed 393 such lines
        of 1,556)."""
        if self.session.facts.pending:  # type: ignore[union-attr]
            self.noted += 1
            if self.learning or self.noted > LEARN_AFTER:
                self.learn()

    def learn(self) -> None:
        """Retire the markers of the fact rules whose facts are all known now (Prefilter.retire); with
        a new round (rounds.py), which knows fewer facts than the last, shapes judged inert while they
        were known may state this round's facts. Fewer markers only ever make fewer lines matter (first
        value wins), so the lines of this chunk located with more stay valid."""
        collector = self.session.facts
        assert collector is not None
        facts = collector.facts  # (works through the lines noted since the last time)
        if facts.known() != self.known_then or collector is not self.known_in:
            keys = frozenset(facts.values)
            if not keys >= self.known_keys:
                # Markers come back (a new round knows other facts): shapes judged inert without them
                # may matter now. A round that knows what the last knew keeps them (the warnings
                # benchmark's rounds found 3,823 lines, 7,159 when each new round cleared them).
                self.inert.clear()
                self.narrowed = None
                self.told = -1
                if self.locator is not None:
                    self.locator.known(())
            self.known_then, self.known_in, self.known_keys = facts.known(), collector, keys
            if self.pf.retire(keys) and self.locator is not None:
                self.locator.retarget(self.pf.markers)

    def narrow(self) -> None:
        """Between chunks: tell the locator the shapes judged since, retire what the facts allow, and
        set apart the banner shapes that are still banners only."""
        pf, locator = self.pf, self.locator
        self.learning = True
        self.aside_ok.clear()  # the markers may change below, and with them which shapes are banners only
        if locator is not None and len(self.inert) != self.told:
            self.told = len(self.inert)
            locator.known(self.inert)
        self.learn()
        if locator is not None and self.banners:
            # A shape that holds a fact's marker is no banner only while the fact is unknown: no
            # longer set apart (it comes back when a line of it is judged a banner only again).
            for key, sh in list(self.banners.items()):
                if not pf.info(sh)[0] or sh not in pf.banner_only:
                    del self.banners[key]
            if self.banners.keys() != self.banners_told:
                self.banners_told = frozenset(self.banners)
                if len(self.shapes_of) < 4 * MAX_BANNER_SHAPES:
                    self.shapes_of.update(self.banners)
                locator.aside(self.banners_told)

    def apart(self, located: Located) -> Located:
        """The located chunk, its lines set aside kept apart only if every shape that set them aside is
        still a banner only (they were located ahead, maybe under other markers); else put back among
        the lines of interest, to be judged one by one."""
        if len(located) < 6:
            return (*located[:3], [], [], frozenset())  # type: ignore[return-value]
        if not located[3]:
            return located
        keys = located[5]
        ok = self.aside_ok.get(keys)
        if ok is None:
            pf, shapes_of = self.pf, self.shapes_of
            ok = self.aside_ok[keys] = all(k in shapes_of and pf.info(shapes_of[k])[0]
                                           and shapes_of[k] in pf.banner_only for k in keys)
        if ok:
            return located
        merged = sorted(zip(located[1] + located[3], located[2] + located[4]))
        return (located[0], [h for h, _ in merged], [st for _, st in merged], [], [], keys)
