"""Wires the stages for one or more sources: read -> frame -> (facts, records) -> diagnoses."""

from __future__ import annotations

from collections.abc import Callable, Iterable, Iterator

from ._struct import dataclass, field, replace
from .catalog import Catalog
from .context import FactCollector, Facts
from .diagnose import diagnose, merge
from .frame import frame_line, frame_physical
from .locate import Located, Locator
from .prefilter import CONTROL_MARK as _CONTROL
from .prefilter import Prefilter, route_key, shape, zero_digits
from .read import decode_physical, iter_line_chunks, iter_lines, open_source
from .records import CrashRecord, Diagnosis, Frame
from .rounds import Round, RoundCounter, rounds_of
from .skim import Skimmer
from .traceback import RecordExtractor

TYPE_CHECKING = False  # typing.TYPE_CHECKING without importing typing (~4 ms of start-up)
if TYPE_CHECKING:
    from typing import Any, BinaryIO

    NextBlockers = Callable[[Frame, tuple[Frame, ...]], list[dict[str, Any]]]

# Lines looked at one by one, back from a line of interest, for the last one with a route key.
_WALK_BACK = 64
# Bytes of a chunk judged by shape at a time while a record is open.
_WINDOW = 1 << 16
# Records kept for a second diagnosis once the whole source (and every start-up fact) has been read.
MAX_KEPT_RECORDS = 2000


@dataclass(slots=True)
class SourceSession:
    """One source read incrementally; used as-is by scan, watch and ci."""

    name: str
    cat: Catalog
    next_blockers: NextBlockers | None = None
    # Sees every record and its diagnosis (None where no signature matches) and gives the diagnosis to
    # use: mine's unknown groups. None: the diagnosis as it is, as in a scan.
    on_record: Callable[[CrashRecord, Diagnosis | None], Diagnosis | None] | None = None
    lines: int = 0
    extractor: RecordExtractor = field(default_factory=RecordExtractor)
    facts: FactCollector | None = None  # the current round's
    rounds: RoundCounter | None = None
    kept: list[CrashRecord] = field(default_factory=list)
    overflow: bool = False
    # Each kept record's round, diagnosis and how many facts were known when it was made: facts are only
    # ever added (first value wins), so with as many known at the end the diagnosis stands.
    _diagnosed: list[tuple[int, tuple[int, ...], Diagnosis | None]] = field(default_factory=list)
    # Each round's facts: a launch's own start-up lines say what it ran with (a restart may change flags).
    _round_facts: list[FactCollector] = field(default_factory=list)
    _merged_before: dict[int, tuple[Facts, tuple[int, ...]]] = field(default_factory=dict)  # see _before

    def __post_init__(self) -> None:
        self.facts = FactCollector(self.cat)
        self._round_facts.append(self.facts)
        self.rounds = RoundCounter(self.cat.banners)

    def feed(self, text: str) -> list[Diagnosis]:
        """One decoded line in; the diagnoses of the records it completed out."""
        self.lines += 1
        assert self.facts is not None and self.rounds is not None
        out: list[Diagnosis] = []
        for line in frame_physical(self.name, self.lines, text):  # one, unless newlines were lost
            out.extend(self._diagnose(self.extractor.feed(line)))
            # After the records it completed: a banner closes the last launch's record, and its facts are
            # the next launch's.
            if self.rounds.line(line.lineno, line.text, self.extractor.active_streams):
                self._next_round()
            self.facts.feed(line)
        return out

    def _next_round(self) -> None:
        self.facts = FactCollector(self.cat)
        self._round_facts.append(self.facts)

    def _facts_for(self, round_: int) -> tuple[Facts, tuple[int, ...]]:
        """The facts a record of this round is diagnosed with: the round's own, and for what it does not
        say, the latest earlier round's; with how many each round knows (the facts' version)."""
        own = self._round_facts[round_ - 1].facts
        if round_ == 1:
            return own, (own.known(),)
        return _with(*self._before(round_), own)  # later rounds win

    def _before(self, round_: int) -> tuple[Facts, tuple[int, ...]]:
        """The facts of the rounds before this one, merged, and their versions: those rounds have ended, so
        this is made once per round, from the round before's (a log of hundreds of restarts stays linear)."""
        cache = self._merged_before
        r = round_
        while r > 2 and r not in cache:
            r -= 1
        if r not in cache:
            cache[r] = _with(Facts(), (), self._round_facts[0].facts)
        for k in range(r + 1, round_ + 1):
            cache[k] = _with(*cache[k - 1], self._round_facts[k - 2].facts)
        return cache[round_]

    def new_file(self) -> None:
        """The followed name is a new file from the next line on (rotated, truncated, recreated)."""
        assert self.rounds is not None
        if self.rounds.new_file(self.lines + 1, self.extractor.active_streams):
            self._next_round()

    def feed_at(self, lineno: int, text: str) -> list[Diagnosis]:
        """Like feed, for a source whose lines before `lineno` were skipped (see scan_chunks)."""
        self.lines = lineno - 1
        return self.feed(text)

    def finish(self) -> list[Diagnosis]:
        return self._diagnose(self.extractor.finish())

    def finish_in_order(self, stream_order: Callable[[list[str]], list[str]]) -> list[Diagnosis]:
        """finish(), with the records still open taken in the stream order `stream_order` gives.

        RecordExtractor finishes its streams in the order it first saw them; a session that skipped
        lines may have seen them in another order.
        """
        keys = self.extractor.active_streams()
        records = self.extractor.finish()
        if len(keys) > 1 and len(keys) == len(records):
            by_key = dict(zip(keys, records))
            records = [by_key[k] for k in stream_order(keys)]
        return self._diagnose(records)

    def flush_stream(self, key: str, complete: bool | None = None) -> list[Diagnosis]:
        """End the record open on a rank stream (it went quiet); complete=None: as finish() decides."""
        rec = self.extractor.close_stream(key, complete)
        return self._diagnose(self.extractor.take_spilled() + ([rec] if rec is not None else []))

    def _diagnose(self, records: Iterable[CrashRecord]) -> list[Diagnosis]:
        out = []
        assert self.rounds is not None
        for rec in records:
            r = self.rounds.record(rec.kind, rec.start_line)  # a fatal record ends its round
            facts, version = self._facts_for(r)
            d = self._diagnose_one(rec, r, facts)
            if len(self.kept) < MAX_KEPT_RECORDS:
                self.kept.append(rec)
                self._diagnosed.append((r, version, d))
            else:
                self.overflow = True
            if d is not None:
                out.append(d)
        return out

    def _diagnose_one(self, rec: CrashRecord, round_: int, facts: Facts) -> Diagnosis | None:
        d = _in_round(round_, diagnose(rec, self.cat, facts, self.next_blockers))
        if self.on_record is not None:
            d = self.on_record(rec, d)
        return d

    def final_diagnoses(self, early: list[Diagnosis]) -> list[Diagnosis]:
        """Re-diagnose with every fact of the source known (server arguments may come late)."""
        if self.overflow or not self.kept:
            return early
        out = []
        for rec, (r, then, d) in zip(self.kept, self._diagnosed):
            facts, version = self._facts_for(r)
            if then != version:
                d = self._diagnose_one(rec, r, facts)
            if d is not None:
                out.append(d)
        return out


def _with(before: Facts, version: tuple[int, ...], later: Facts) -> tuple[Facts, tuple[int, ...]]:
    """Facts merged with a later round's (whose values win), and the versions with that round's."""
    merged = Facts(dict(before.values), dict(before.where), set(before.from_prefix))
    merged.values.update(later.values)
    merged.where.update(later.where)
    merged.from_prefix |= later.from_prefix
    return merged, (*version, later.known())


def _in_round(round_: int, d: Diagnosis | None) -> Diagnosis | None:
    """The diagnosis with the round its record began in (rounds.py)."""
    if d is None or round_ == 1:
        return d
    return replace(d, occurrences=tuple(replace(o, round=round_) for o in d.occurrences))


@dataclass(frozen=True, slots=True)
class ScanResult:
    sources: tuple[tuple[str, int], ...]
    diagnoses: tuple[Diagnosis, ...]
    rounds: tuple[Round, ...] = ()  # of the sources with more than one (rounds.py)

    @property
    def total_lines(self) -> int:
        return sum(n for _, n in self.sources)


def scan_lines(name: str, lines: Iterable[str], cat: Catalog, next_blockers: NextBlockers | None = None,
               on_record: Callable[[CrashRecord, Diagnosis | None], Diagnosis | None] | None = None) -> tuple[int, list[Diagnosis]]:
    s = SourceSession(name, cat, next_blockers, on_record)
    early: list[Diagnosis] = []
    for text in lines:
        early.extend(s.feed(text))
    early.extend(s.finish())
    return s.lines, s.final_diagnoses(early)


_SHARED: dict[int, tuple[Catalog, Prefilter, Locator | None]] = {}


def shared_prefilter(cat: Catalog) -> tuple[Prefilter, Locator | None]:
    """One Prefilter and Locator per catalog for every source a process reads: the Prefilter's cache of
    line shapes (bounded, see prefilter.MAX_SHAPES) is what makes the thousandth small log of a fleet
    as fast as the first megabyte of a big one, and a Locator costs ~2 ms to build."""
    got = _SHARED.get(id(cat))
    if got is None or got[0] is not cat:
        pf = Prefilter(cat)
        got = _SHARED[id(cat)] = (cat, pf, Locator.create(pf.markers))
    pf, locator = got[1], got[2]
    # The last source narrowed both to what it knew (Prefilter.retire, Locator.known): this one knows
    # nothing yet, so every fact marker is looked for again and no line shape is taken as inert.
    if pf.retire(()) and locator is not None:
        locator.retarget(pf.markers)
    if locator is not None:
        locator.known(())
        locator.aside(())
    return pf, locator


def scan_chunks(
    name: str,
    chunks: Iterable[bytes],
    cat: Catalog,
    next_blockers: NextBlockers | None = None,
    replay: Callable[[], Iterable[bytes]] | None = None,
    native: bool = True,
    on_record: Callable[[CrashRecord, Diagnosis | None], Diagnosis | None] | None = None,
) -> tuple[int, list[Diagnosis]]:
    """scan_located for chunks of whole lines (read.iter_line_chunks), located natively on worker
    threads when crashlens has its native parts (locate.py) and `native` is set."""
    pf, locator = shared_prefilter(cat)
    locator = locator if native else None
    pairs = locator.ahead(chunks) if locator is not None else ((c, None) for c in chunks)
    return scan_located(name, pairs, cat, next_blockers, replay, pf, locator, on_record)


def scan_file(name: str, path: str, fh: BinaryIO, cat: Catalog,
              next_blockers: NextBlockers | None = None,
              on_record: Callable[[CrashRecord, Diagnosis | None], Diagnosis | None] | None = None) -> tuple[int, list[Diagnosis]]:
    """A file opened by read.open_source: a regular file is read in byte ranges by the native
    locator's workers (locate.py); a compressed one, or one without native parts, as a stream of
    chunks, and records still open at the end are put in order by reading the file again. A FIFO or
    character device is read once, line by line like stdin: it cannot be read again."""
    import os
    import stat

    def replay() -> Iterator[bytes]:
        with open_source(path, quiet=True)[1] as again:
            yield from iter_line_chunks(again)

    raw = getattr(fh, "raw_fileno", None)  # read.Decompressed: the file its compressed bytes come from
    fd = raw() if raw is not None else fh.fileno() if hasattr(fh, "fileno") else -1
    st = os.fstat(fd) if fd >= 0 else None
    if st is not None and not stat.S_ISREG(st.st_mode):
        return scan_lines(name, iter_lines(fh), cat, next_blockers, on_record)  # compressed or not, it cannot be read again
    if raw is None and st is not None and hasattr(os, "pread"):
        pf, locator = shared_prefilter(cat)
        if locator is not None:
            return scan_located(name, locator.read_file(fd, st.st_size), cat, next_blockers, replay, pf,
                                locator, on_record)
    return scan_chunks(name, iter_line_chunks(fh), cat, next_blockers, replay, on_record=on_record)


def scan_located(
    name: str,
    pairs: Iterable[tuple[bytes, Located | None]],
    cat: Catalog,
    next_blockers: NextBlockers | None = None,
    replay: Callable[[], Iterable[bytes]] | None = None,
    pf: Prefilter | None = None,
    locator: Locator | None = None,
    on_record: Callable[[CrashRecord, Diagnosis | None], Diagnosis | None] | None = None,
) -> tuple[int, list[Diagnosis]]:
    """scan_lines for a source read as chunks of whole lines (read.iter_line_chunks), each with its
    lines of interest where they were located natively (locate.py), with the same result, framing
    only the lines that can change it (see prefilter.py).

    A line is skipped when it cannot start a record or give a fact and RecordExtractor would route it
    to an idle stream: while no record is open that is any such line; while some are, a line
    prefixed with another rank. Before it feeds a line, it feeds the last line it skipped that
    carries a rank or a prefix, since RecordExtractor routes unprefixed lines by it.
    `replay` gives the chunks again from the start; with it, records still open at the end are
    finished in the order scan_lines would finish them (the order their ranks first appear).
    `pf`: the Prefilter whose markers located the chunks (one is made if none is given); `locator`:
    the native locator that is locating them, if any. From one chunk to the next, the markers of
    start-up facts already known are retired (Prefilter.retire) and the locator is given the rest.
    `on_record`: sees each record and its diagnosis, gives the one to use (SourceSession.on_record).
    """
    s = SourceSession(name, cat, next_blockers, on_record)
    if pf is None:
        pf = Prefilter(cat)
    extractor = s.extractor
    skimmer = Skimmer(s, pf, locator)
    early: list[Diagnosis] = []
    base = 0  # lines before the current chunk
    hint: tuple[int, bytes] | None = None  # last skipped line with a route key, not fed yet
    first_chunk: dict[str | None, int] = {}  # route key (digits zeroed) -> chunk it first shows in
    first_control: int | None = None  # first chunk with a control character: any key may hide there
    first_native: int | None = None  # first chunk skimmed natively: its route keys were not looked at

    def feed(lineno: int, raw: bytes) -> None:
        nonlocal hint
        if hint is not None:
            early.extend(s.feed_at(hint[0], decode_physical(hint[1])))
            hint = None
        early.extend(s.feed_at(lineno, decode_physical(raw)))
        skimmer.fed()

    def hint_between(chunk: bytes, lo: int, hi: int, first: int, stop: int) -> None:
        """Set the hint to the last line with a route key among lines first..stop-1 of the chunk,
        which lie in chunk[lo:hi] (hi just past a newline); leave it if there is none."""
        nonlocal hint
        end, k = hi - 1, stop
        for _ in range(_WALK_BACK):
            if k <= first:
                return
            start = chunk.rfind(b"\n", lo, end) + 1 or lo
            k -= 1
            line = bytes(chunk[start:end])
            if pf.route(shape(line)) is not None:
                hint = (base + k + 1, line)
                return
            end = start - 1
        if k > first:  # many unprefixed lines: shape the rest at once
            lines = bytes(chunk[lo:end + 1]).split(b"\n")
            shapes = [shape(ln) for ln in lines]
            j = _last_routed(pf, shapes, len(lines) - 1, 0)
            if j is not None:
                hint = (base + first + j + 1, lines[j])

    def skim(chunk: bytes, located: Located, i: int, lo: int) -> tuple[int, int]:
        """Feed the lines of interest of a chunk from line i (at byte lo) while no record is open (the
        Skimmer chooses them); where a record opened (line, byte), or the chunk's end."""
        for h, start, end, line in skimmer.lines(chunk, located, i):
            hint_between(chunk, lo, start, i, h)
            feed(base + h + 1, line)
            i, lo = h + 1, end + 1
            if extractor.active_streams():
                return i, lo
        hint_between(chunk, lo, len(chunk), i, located[0])
        return located[0], len(chunk)

    def shape_chunk(index: int, chunk: bytes) -> None:
        """Feed what matters in a chunk of whole lines, judged by line shapes (prefilter.py)."""
        nonlocal base, hint, first_control
        shapes, present = pf.shapes(chunk)
        n = len(shapes) - 1
        for zkey in set(map(pf.route, present)).difference(first_chunk):
            first_chunk[zkey] = index
        if first_control is None and any(_CONTROL in sh for sh in present):
            first_control = index
        # The lines that may matter where no record is open, judged when first needed: the lines of an
        # open record are fed whatever they hold, and judging a shape costs more than framing it.
        hits: list[int] | None = None
        if not extractor.active_streams():
            hits = pf.hits(shapes, present)
            if not hits:
                k = _last_routed(pf, shapes, n, 0)
                if k is not None:
                    hint = (base + k + 1, _line_at_from_end(chunk, n - k))
                base += n
                return
            hits.append(n)
        lines = chunk.split(b"\n")
        nxt = 0  # index into hits
        i = 0
        while i < n:
            active = extractor.active_streams()
            if not active:
                if hits is None:
                    hits = [*pf.hits(shapes, None, i), n]
                while hits[nxt] < i:
                    nxt += 1
                h = hits[nxt]
                k = _last_routed(pf, shapes, h, i)
                if k is not None:
                    hint = (base + k + 1, lines[k])
                if h < n and shapes[h] in pf.banner_only and not s.rounds.crashed:
                    # A banner before any crash of its round begins nothing (as in skim): skipped, and
                    # a routing hint like any skipped line.
                    if pf.route(shapes[h]) is not None:
                        hint = (base + h + 1, lines[h])
                elif h < n:
                    feed(base + h + 1, lines[h])
                i = h + 1
                continue
            # Records are open: every unprefixed line, and every line of an open record's rank (its
            # digits aside), goes through; a line prefixed with another rank is skipped.
            zactive = {zero_digits(k) for k in active}
            # A line of a dangerous shape may change an open record, or start one: it goes to an open
            # record's stream (unprefixed, or an open record's rank), or it may matter.
            route, matters = pf.route, pf.matters
            danger = {sh for sh in present if (z := route(sh)) is None or z in zactive or matters(sh)}
            # Lazily: the set changes whenever a record opens or closes, and the scan starts again.
            for k in (k for k in range(i, n) if shapes[k] in danger):
                if k > i:
                    hint = (base + k, lines[k - 1])  # every line skipped here has a route key
                zkey = pf.route(shapes[k])
                if zkey and route_key(frame_line(name, 0, decode_physical(lines[k]))) not in active \
                        and not pf.matters(shapes[k]):
                    hint = (base + k + 1, lines[k])  # another rank whose digits look alike
                    i = k + 1
                    continue
                feed(base + k + 1, lines[k])
                i = k + 1
                if extractor.active_streams() != active:
                    break
            else:
                if i < n:
                    hint = (base + n, lines[n - 1])
                    i = n
        base += n

    for index, (chunk, located) in enumerate(pairs):
        located = skimmer.chunk(index, located)
        if located is None:
            shape_chunk(index, chunk)
            continue
        if first_native is None:
            first_native = index
        # Skim while no record is open; while one is, judge lines by shape, a window at a time, so
        # that skimming resumes soon after the record closes.
        top, (n, i, lo) = base, (located[0], 0, 0)
        while i < n:
            if not extractor.active_streams():
                i, lo = skim(chunk, located, i, lo)
                continue
            hi = chunk.find(b"\n", min(lo + _WINDOW, len(chunk)) - 1) + 1
            base = top + i
            shape_chunk(index, bytes(chunk[lo:hi]))
            i, lo, base = base - top, hi, top
        base = top + n
    s.lines = base
    if replay is not None:
        def order(keys: list[str]) -> list[str]:
            start = min(first_chunk.get(zero_digits(k), 0) if k else 0 for k in keys)
            for other in (first_control, first_native):
                if other is not None:
                    start = min(start, other)
            return _stream_order(pf, replay(), keys, name, start)

        early.extend(s.finish_in_order(order))
    else:
        early.extend(s.finish())
    return s.lines, s.final_diagnoses(early)


def _last_routed(pf: Prefilter, shapes: list[bytes], end: int, start: int) -> int | None:
    """The index of the last line in shapes[start:end] that RecordExtractor routes by itself."""
    for k in range(end - 1, start - 1, -1):
        if pf.route(shapes[k]) is not None:
            return k
    return None


def _line_at_from_end(chunk: bytes, back: int) -> bytes:
    """The line `back` lines before the end of a chunk of whole lines (1: the last line)."""
    end = len(chunk) - 1
    for _ in range(back - 1):
        end = chunk.rfind(b"\n", 0, end)
    return chunk[chunk.rfind(b"\n", 0, end) + 1 : end]


def _stream_order(pf: Prefilter, chunks: Iterable[bytes], keys: list[str], name: str, start: int) -> list[str]:
    """The keys in the order RecordExtractor creates their streams when it is fed every line.

    A stream is created by the first line routed to a new key: a rank, or "" for a prefixed line
    without one or an unprefixed first line; later unprefixed lines go to existing streams. No key
    shows before chunk `start`, where the first of their shapes does.
    """
    want = {zero_digits(k) for k in keys}
    seen: list[str] = []
    base = 0
    for index, chunk in enumerate(chunks):
        if index < start:
            base = 1  # only "is this the first line" is needed below
            continue
        shapes, present = pf.shapes(chunk)
        n = len(shapes) - 1
        if base == 0 and n and pf.route(shapes[0]) is None and "" in keys:
            seen.append("")
        # A shape with control characters does not show the key; such lines are framed for real.
        match = {sh for sh in present if _CONTROL in sh or pf.route(sh) in want}
        if match:
            lines = chunk.split(b"\n")
            for i in [i for i in range(n) if shapes[i] in match]:
                key = route_key(frame_line(name, base + i + 1, decode_physical(lines[i])))
                if key in keys and key not in seen:
                    seen.append(key)
                    if len(seen) == len(keys):
                        return seen
        base += n
    return seen + [k for k in keys if k not in seen]


def combine(per_source: list[tuple[str, int, list[Diagnosis]]]) -> ScanResult:
    all_d: list[Diagnosis] = []
    for _, _, ds in per_source:
        all_d.extend(ds)
    merged = in_log_order(merge(per_context(all_d)), [n for n, _, _ in per_source])
    return ScanResult(tuple((n, c) for n, c, _ in per_source), merged, rounds_of(merged))


def _context_key(d: Diagnosis) -> tuple[str, str] | None:
    """The compile context a crash was diagnosed under, as far as it changes the fixes; None if unknown."""
    c = d.context
    return (c.server or "torch", c.mode or "") if c.server or c.mode else None


class ContextSplit:
    """Context is per source (and per round of a source: a restart may change the launch flags): a crash
    that one source shows under one server and another source under another (an SGLang log and a vLLM
    log) is one diagnosis per context, each with its own fixes. The first context seen keeps the crash's
    id; each other one marks it (`<id>-vllm-compile`). A copy whose source says nothing of its context
    goes with its source's, else with the first. Where every source agrees nothing changes. `learn` what the sources say (all of them first, for a scan; as they come, for
    watch), then `split`."""

    def __init__(self) -> None:
        self._by_source: dict[str, dict[tuple[str, int], tuple[str, str]]] = {}  # id -> (source, round) -> context
        self._first: dict[str, tuple[str, str]] = {}  # id -> the first context it was seen under

    def learn(self, diagnoses: Iterable[Diagnosis]) -> None:
        for d in diagnoses:
            key = _context_key(d)
            if key is not None and d.occurrences:
                o = d.occurrences[0]
                self._by_source.setdefault(d.id, {}).setdefault((o.source, o.round), key)
                self._first.setdefault(d.id, key)

    def split(self, diagnoses: Iterable[Diagnosis]) -> list[Diagnosis]:
        out = []
        for d in diagnoses:
            by_src = self._by_source.get(d.id)
            if by_src is None or len(set(by_src.values())) < 2 or not d.occurrences:
                out.append(d)
                continue
            o = d.occurrences[0]
            key = by_src.get((o.source, o.round)) or self._first[d.id]
            out.append(d if key == self._first[d.id] else replace(d, id=f"{d.id}-{key[1] or key[0]}"))
        return out


def per_context(diagnoses: list[Diagnosis]) -> list[Diagnosis]:
    """The diagnoses of a whole run split by context (ContextSplit)."""
    split = ContextSplit()
    split.learn(diagnoses)
    return split.split(diagnoses)


def in_log_order(diagnoses: Iterable[Diagnosis], sources: list[str]) -> tuple[Diagnosis, ...]:
    """Each diagnosis with its occurrences in log order: source by source as given, line by line."""
    rank = {name: i for i, name in enumerate(sources)}
    out = []
    for d in diagnoses:
        occ = tuple(sorted(d.occurrences, key=lambda o: (rank.get(o.source, len(rank)), o.line)))
        out.append(d if occ == d.occurrences else replace(d, occurrences=occ))
    return tuple(out)
