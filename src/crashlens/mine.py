"""Log mining: every crash of many logs grouped by its diagnosis id, with counts, sources, ranks and times.

One function turns a file into groups (mine_file) and one merges groups (Groups.add, then finish); the
local and Ray engines (engine.py) are two ways of calling the first, so their results are the same by
construction. Memory grows with the number of groups, not with the bytes read.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Iterator

from ._struct import dataclass, field, replace
from .catalog import Catalog
from .diagnose import _richness, fingerprint, merge
from .match import is_dynamo, match_record
from .records import Context, CrashRecord, Diagnosis, Occurrence, _natural

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any

# Volatile tokens are masked before near-duplicate messages are compared (Sentry/Drain style).
_MASKS = [
    (re.compile(r"0x[0-9a-fA-F]+"), "<hex>"),
    (re.compile(r"(?:/[\w.@+-]+)+/?"), "<path>"),
    (re.compile(r"'[^'\n]{0,200}'|\"[^\"\n]{0,200}\""), "<str>"),
    (re.compile(r"\b\d+(?:\.\d+)?\b"), "<num>"),
    (re.compile(r"\s+"), " "),
]
# Occurrences kept per group for the timeline (the earliest ones); counts and sources are never cut.
MAX_TIMELINE = 200
# How alike two unknown groups' masked messages must be (rapidfuzz ratio) to be one group.
FUZZY_MERGE = 90.0
# Record kinds that are crashes or graph breaks (a bare warning is not mined).
_MINED_KINDS = ("traceback", "partial", "graph_break")


def template(text: str) -> str:
    for pat, repl in _MASKS:
        text = pat.sub(repl, text)
    return text.strip()[:300]


@dataclass(frozen=True, slots=True)
class Seen:
    """One occurrence of a group, where and when: `time` is the log's timestamp (ISO 8601) or None."""

    time: str | None
    file: int  # the source's position in the mined file list (file order where there is no time)
    source: str
    line: int
    rank: str | None = None
    round: int | None = None

    def first_key(self) -> tuple[int, str, str, int, int, str]:
        """Earliest first: timed occurrences by time, then file order. Times compare without their year
        first: vLLM prints none, and one fleet often mixes vLLM and SGLang logs."""
        t = self.time or ""
        return (self.time is None, t[-14:], t, self.file, self.line, self.rank or "")

    def last_key(self) -> tuple[int, str, str, int, int, str]:
        t = self.time or ""
        return (self.time is not None, t[-14:], t, self.file, self.line, self.rank or "")

    def to_json(self) -> dict[str, Any]:
        doc: dict[str, Any] = {"time": self.time, "source": self.source, "line": self.line, "rank": self.rank}
        if self.round is not None:
            doc["round"] = self.round
        return doc


@dataclass(slots=True)
class Group:
    """One distinct crash over all the logs mined."""

    id: str
    diagnosis: Diagnosis  # the richest copy, occurrences left out (see timeline)
    known: bool  # a signature names it exactly (not the generic fallback, not a near match)
    runs: set[tuple[int, int | None]]  # (file, round): each server run that hit it
    sources: dict[str, int]  # source name -> its position in the file list
    ranks: set[str]
    first: Seen
    last: Seen
    example: Seen  # where the richest copy is
    timeline: list[Seen]  # the earliest MAX_TIMELINE occurrences, in first_key order
    merged: set[str] = field(default_factory=set)  # ids of groups folded into this one
    frames: tuple[tuple[str, int, str], ...] = ()  # the richest copy's traceback, for finding its cut copies

    @property
    def count(self) -> int:
        """How many times the crash happened: the server runs that hit it (a log, or a round of it
        between restarts), however many copies each printed."""
        return len(self.runs)

    @property
    def signature(self) -> str | None:
        """The signature that names this crash; None when none does (no match, the generic fallback,
        or only a near match)."""
        return self.diagnosis.signature if self.known else None


def is_known(d: Diagnosis, cat: Catalog) -> bool:
    sig = cat.get(d.signature) if d.signature else None
    return sig is not None and "fallback" not in sig.tags and d.near_match is None


def unknown_diagnosis(rec: CrashRecord, cat: Catalog) -> Diagnosis | None:
    """A crash no signature matches, as a diagnosis of signature None: its id is scan's fingerprint,
    with the exception type standing in for the signature."""
    if rec.kind not in _MINED_KINDS:
        return None
    head = rec.headline
    gb = rec.dynamo.gb_type if rec.dynamo else None
    if head is None and not gb:
        return None
    _m, t = match_record(rec, cat)
    exc = head.type if head else ""
    message = ((gb or (head.message if head else "")) or "").split("\n", 1)[0]
    family = "dynamo" if is_dynamo(rec) else "other"
    return Diagnosis(
        id=fingerprint(f"unknown:{exc}", family, t, gb, message),
        family=family,
        signature=None,
        title=(f"{exc}: {template(message)}" if exc else template(message) or "crash report without an exception line")
        + (f" (in {t.culprit.function})" if t.culprit is not None and not exc else ""),
        summary="No signature in the catalog names this crash.",
        confidence=0.0,
        fatal=rec.kind in ("traceback", "partial"),
        exception=(exc, message) if exc or message else None,
        culprit=t.culprit,
        callee=t.callee or None,
        chain=t.chain,
        context=Context(),
        occurrences=(Occurrence(rec.source, rec.start_line, rec.rank),),
        fixes=(),
        gb_id=rec.dynamo.gb_id if rec.dynamo else None,
        complete=rec.complete and bool(exc),
    )


@dataclass(frozen=True, slots=True)
class FileResult:
    """What mining one file gives: its groups, and what went wrong reading it (warnings, not errors)."""

    index: int
    source: str
    bytes: int
    lines: int
    groups: tuple[Group, ...]
    warnings: tuple[str, ...] = ()


def mine_file(path: str, index: int, signatures: tuple[str, ...] = (), name: str | None = None) -> FileResult:
    """One file (plain or .gz) scanned as `crashlens scan` scans it, its crashes grouped by diagnosis id.
    `name`: the source's name in the groups (default: `path`); a file that cannot be read gives a
    warning, not an error, so one bad file does not stop a fleet."""
    from .read import InputError

    try:
        return _mine_file(path, index, signatures, name or path)
    except (InputError, OSError) as e:
        text = str(e) if isinstance(e, InputError) else f"{name or path}: cannot read ({e.strerror or e})"
        return FileResult(index, name or path, 0, 0, (), (text,))


def _mine_file(path: str, index: int, signatures: tuple[str, ...], name: str) -> FileResult:
    import os

    from .catalog import get_catalog
    from .pipeline import scan_chunks, scan_file
    from .read import iter_line_chunks, open_source
    from .when import line_times

    cat = get_catalog(list(signatures))
    warnings: list[str] = []

    frames: dict[tuple[int, str | None], tuple[tuple[str, int, str], ...]] = {}

    ends: dict[tuple[int, str | None], int] = {}

    def on_record(rec: CrashRecord, d: Diagnosis | None) -> Diagnosis | None:
        frames[(rec.start_line, rec.rank)] = record_frames(rec)
        ends[(rec.start_line, rec.rank)] = rec.end_line
        return d if d is not None else unknown_diagnosis(rec, cat)

    # Quiet: a cut archive's warning goes back with the result (a Ray task's stderr is not the user's),
    # once, however many times the file is read.
    _src, fh = open_source(path, quiet=True)
    try:
        size = os.fstat(fh.fileno()).st_size if hasattr(fh, "fileno") else 0
        if path.endswith(".gz"):
            def replay() -> Iterator[bytes]:
                with open_source(path, quiet=True)[1] as again:
                    yield from _until_cut(iter_line_chunks(again), None)

            # Chunks of scan's size: each costs the pipeline a fixed amount, and 64 KB ones made a .gz
            # cost three times a plain file. (A cut .gz loses nothing by it: read.Decompressed reads in
            # small steps and keeps what it decoded before the cut.)
            n, diags = scan_chunks(name, _until_cut(iter_line_chunks(fh), (name, warnings)), cat,
                                   None, replay, on_record=on_record)
        else:
            n, diags = scan_file(name, path, fh, cat, None, on_record)
        stopped = getattr(fh, "stopped", None)  # read.Decompressed
        if stopped:
            warnings.append(stopped.replace(path, name, 1))
    finally:
        fh.close()
    # Frames with no exception line after them are a crash only where the log stops there (cut off);
    # elsewhere they are a stack a warning printed ("User stack trace:"), not a crash of their own.
    diags = [d for d in diags if d.signature is not None or (d.exception and d.exception[0])
             or ends.get((d.occurrences[0].line, d.occurrences[0].rank), n) >= n - 1]
    if not diags:
        return FileResult(index, name, size, n, (), tuple(warnings))
    restarts: list[int] = []
    times = line_times(path, (o.line for d in diags for o in d.occurrences), restarts)
    return FileResult(index, name, size, n, tuple(file_groups(diags, index, times, cat, restarts, frames)),
                      tuple(warnings))


# Frames of a record's traceback kept per group: enough to recognise a cut copy, bounded.
MAX_FRAMES = 64


def record_frames(rec: CrashRecord) -> tuple[tuple[str, int, str], ...]:
    """The frames a record's traceback printed, outermost first, every exception of its chain."""
    return tuple((f.file, f.line, f.function) for b in rec.chain for f in b.frames)[:MAX_FRAMES]


def _until_cut(chunks: Iterator[bytes], warn: tuple[str, list[str]] | None) -> Iterator[bytes]:
    """Chunks until the end, or until a cut or corrupt .gz stops: what came before is still read."""
    import zlib

    try:
        yield from chunks
    except (EOFError, OSError, zlib.error) as e:
        if warn is not None:
            warn[1].append(f"{warn[0]}: stopped reading ({e}); using the lines before that")


def file_groups(diags: list[Diagnosis], index: int, times: dict[int, str | None], cat: Catalog,
                restarts: list[int] | None = None,
                frames: dict[tuple[int, str | None], tuple[tuple[str, int, str], ...]] | None = None) -> list[Group]:
    """One source's diagnoses (one per crash record) as groups: scan's merge folds re-raises and cut-off
    copies into the complete report, within one server run. A group's count is the number of server
    runs that hit the crash (the log, cut at each restart), not the number of copies printed: every rank
    prints one, a server re-raises it, dynamo logs a graph break and raises it."""
    run_of = _runs([o for d in diags for o in d.occurrences], restarts or [])
    by_run: dict[int, list[Diagnosis]] = {}
    for d in diags:
        by_run.setdefault(run_of[d.occurrences[0]], []).append(d)
    out: dict[str, Group] = {}
    for run in sorted(by_run):
        # Never one merge over the whole log: two runs' crashes are two crashes, even where one run's
        # copy looks like a piece of the other's (the recompile limit's warning, alone in a run without
        # fullgraph, is the very line that announced a fullgraph run's fatal error).
        for g in _run_groups(by_run[run], index, times, cat, run_of, frames or {}):
            out[g.id] = combine(out[g.id], g) if g.id in out else g
    return list(out.values())


def _run_groups(diags: list[Diagnosis], index: int, times: dict[int, str | None], cat: Catalog,
                run_of: dict[Occurrence, int],
                frames: dict[tuple[int, str | None], tuple[tuple[str, int, str], ...]]) -> list[Group]:
    merged = merge(diags)
    group_of = {o: d.id for d in merged for o in d.occurrences}
    copies: dict[str, list[Diagnosis]] = {}
    for d in diags:
        copies.setdefault(group_of[d.occurrences[0]], []).append(d)
    out = []
    for d in merged:
        seen = sorted((_seen(o, index, times, run_of) for o in d.occurrences), key=Seen.first_key)
        best = min(copies[d.id], key=lambda c: (_neg(_richness(c)), c.occurrences[0].line))
        out.append(Group(
            id=d.id,
            diagnosis=replace(d, occurrences=()),
            known=is_known(d, cat),
            runs={(index, s.round) for s in seen},
            sources={d.occurrences[0].source: index},
            ranks={o.rank for o in d.occurrences if o.rank},
            first=seen[0],
            last=max(seen, key=Seen.last_key),
            example=_seen(best.occurrences[0], index, times, run_of),
            timeline=seen[:MAX_TIMELINE],
            frames=frames.get((best.occurrences[0].line, best.occurrences[0].rank), ()),
        ))
    return out


def _neg(t: tuple[int, ...]) -> tuple[int, ...]:
    return tuple(-x for x in t)


def _runs(occurrences: list[Occurrence], markers: list[int]) -> dict[Occurrence, int]:
    """The server run (1, 2, 3 in log order) each occurrence is in. A run ends where the pipeline's
    round does (a start-up banner after a crash, rounds.py) and where a restart line follows a crash
    (when.RESTART_MARKERS: each rank's start-up line too, for logs that do not repeat the banner);
    restart lines with no crash between them are one restart (every rank prints its own)."""
    from bisect import bisect_right

    lines = sorted({o.line for o in occurrences})
    starts: list[int] = []
    for m in sorted(markers):
        if starts and bisect_right(lines, m) == bisect_right(lines, starts[-1]):
            continue  # no crash since the last restart line: the same restart
        starts.append(m)
    # Both notions only grow with the line, so the pairs, in order, number the runs.
    keys = {o: (o.round, bisect_right(starts, o.line)) for o in occurrences}
    number = {k: n for n, k in enumerate(sorted(set(keys.values())), 1)}
    return {o: number[k] for o, k in keys.items()}


def _seen(o: Occurrence, index: int, times: dict[int, str | None], run_of: dict[Occurrence, int]) -> Seen:
    """Where and when, and in which server run of its log."""
    return Seen(times.get(o.line), index, o.source, o.line, o.rank, run_of[o])


class Groups:
    """The merge: groups from any number of files, added in any order, give the same result."""

    def __init__(self) -> None:
        self.by_id: dict[str, Group] = {}
        self.files = 0
        self.bytes = 0
        self.lines = 0
        self.warnings: list[tuple[int, str]] = []
        self.finished: list[Group] | None = None

    def add(self, result: FileResult) -> None:
        self.files += 1
        self.bytes += result.bytes
        self.lines += result.lines
        self.warnings.extend((result.index, w) for w in result.warnings)
        for g in result.groups:
            self._add_group(g)

    def _add_group(self, g: Group) -> None:
        cur = self.by_id.get(g.id)
        if cur is None:
            self.by_id[g.id] = g
            return
        self.by_id[g.id] = combine(cur, g)

    @property
    def crashes(self) -> int:
        """The sum of the counts (of the finished groups, once finish ran: a cut copy folded into its
        crash's group in the same run is not another crash)."""
        if self.finished is not None:
            return sum(g.count for g in self.finished)
        return sum(g.count for g in self.by_id.values())

    def finish(self) -> list[Group]:
        """The groups once every file is in: copies in other files folded, near-duplicate unknown
        messages merged; most frequent first."""
        groups = [self.by_id[k] for k in sorted(self.by_id)]
        groups = _fold_across(groups)
        groups = _fold_cut(groups)
        groups = _fuzzy_merge(groups)
        self.warnings.sort()
        self.finished = sorted(groups, key=lambda g: (-g.count, g.first.first_key(), g.id))
        return self.finished


def combine(a: Group, b: Group) -> Group:
    """Two groups as one (commutative and associative, so the order files finish in does not matter);
    the id and diagnosis of the richer, earlier one are kept."""
    ka = (_neg(_richness(a.diagnosis)), a.example.file, a.example.line, a.id)
    kb = (_neg(_richness(b.diagnosis)), b.example.file, b.example.line, b.id)
    best, other = (a, b) if ka <= kb else (b, a)
    timeline = sorted({*a.timeline, *b.timeline}, key=Seen.first_key)[:MAX_TIMELINE]
    merged = set(a.merged) | set(b.merged)
    if a.id != b.id:
        merged.add(other.id)
    return Group(
        id=best.id,
        diagnosis=best.diagnosis,
        known=best.known,
        runs=a.runs | b.runs,
        sources={**a.sources, **b.sources},
        ranks=a.ranks | b.ranks,
        first=min(a.first, b.first, key=Seen.first_key),
        last=max(a.last, b.last, key=Seen.last_key),
        example=best.example,
        timeline=timeline,
        merged=merged,
        frames=best.frames,
    )


def _fold_across(groups: list[Group]) -> list[Group]:
    """scan's merge over one copy of each group: a cut-off copy in one log of a crash that another log
    holds complete is folded into it, as it is within one log."""
    marked = [replace(g.diagnosis, occurrences=(Occurrence(g.id, 0, None),)) for g in groups]
    by_id = {g.id: g for g in groups}
    out = []
    for d in merge(marked):
        ids = sorted(o.source for o in d.occurrences)
        host = by_id[d.id]
        for other in ids:
            if other != d.id:
                host = _absorb(host, by_id[other])
        out.append(host)
    return out


def _absorb(host: Group, part: Group) -> Group:
    """`part` (a cut-off copy) counted as more occurrences of `host`, whose id and diagnosis stay."""
    g = combine(host, part)
    g.id, g.diagnosis, g.known, g.example, g.frames = host.id, host.diagnosis, host.known, host.example, host.frames
    g.merged = (g.merged | {part.id}) - {host.id}
    return g


def _is_cut(g: Group) -> bool:
    """A copy cut off before its exception line (a truncated log, a rank's piece lost among others')."""
    d = g.diagnosis
    return d.signature is None and not d.complete and not (d.exception and d.exception[0]) and bool(g.frames)


def _within(part: tuple[tuple[str, int, str], ...], whole: tuple[tuple[str, int, str], ...]) -> bool:
    n = len(part)
    return 0 < n < len(whole) and any(whole[i : i + n] == part for i in range(len(whole) - n + 1))


def _fold_cut(groups: list[Group]) -> list[Group]:
    """A cut copy whose frames are part of exactly one complete group's traceback is that crash (scan's
    merge cannot tell: a diagnosis keeps only the traced frames); where several groups share those
    frames (a common launcher), it stays a group of its own."""
    whole = [g for g in groups if not _is_cut(g) and g.frames]
    by_id = {g.id: g for g in groups}
    folded: set[str] = set()
    for g in sorted((g for g in groups if _is_cut(g)), key=lambda g: g.id):
        hosts = [h for h in whole if _within(g.frames, h.frames)]
        if len(hosts) == 1:
            by_id[hosts[0].id] = _absorb(by_id[hosts[0].id], g)
            folded.add(g.id)
    return [by_id[g.id] for g in groups if g.id not in folded]


def _fuzzy_key(g: Group) -> str:
    exc = g.diagnosis.exception
    return template(exc[1] if exc else g.diagnosis.title)


def _fuzzy_merge(groups: list[Group]) -> list[Group]:
    """Unknown groups whose masked messages are near duplicates (same exception type, same culprit
    function) become one: the wording of one failure drifts with the values it prints."""
    unknown = sorted((g for g in groups if not g.known),
                     key=lambda g: (-g.count, g.id))
    if len(unknown) < 2:
        return groups
    from rapidfuzz import fuzz

    heads: list[Group] = []
    for g in unknown:
        d = g.diagnosis
        bucket = _bucket(d)
        key = _fuzzy_key(g)
        for i, h in enumerate(heads):
            if _bucket(h.diagnosis) == bucket and fuzz.ratio(key, _fuzzy_key(h)) >= FUZZY_MERGE:
                heads[i] = _absorb(h, g)
                break
        else:
            heads.append(g)
    return [g for g in groups if g.known] + heads


def _bucket(d: Diagnosis) -> tuple[str, str | None, str, str]:
    return (d.family, d.signature, d.exception[0] if d.exception else "", d.culprit.function if d.culprit else "")


def shown(groups: Iterable[Group], include_known: bool) -> list[Group]:
    return [g for g in groups if include_known or not g.known]


def group_json(g: Group, n_files: int | None = None) -> dict[str, Any]:
    """A group in the crashlens/v1 mine document (README, "crashlens mine"): its fields and, under
    `diagnosis`, the richest copy as scan's JSON gives it, its occurrences the timeline's."""
    from .render.json import diagnosis_json

    d = g.diagnosis
    timeline = [s.to_json() for s in g.timeline]
    diag = diagnosis_json(replace(d, occurrences=tuple(Occurrence(s.source, s.line, s.rank) for s in g.timeline)))
    return {
        "id": g.id,
        "signature": g.signature or "unknown",
        "known": g.known,
        "matched_by": None if g.known else d.signature,
        "title": d.title,
        "family": d.family,
        "fatal": d.fatal,
        "exception": {"type": d.exception[0], "message": d.exception[1]} if d.exception else None,
        "culprit": d.culprit.to_json() if d.culprit else None,
        "count": g.count,
        "sources": sorted(g.sources, key=lambda s: (g.sources[s], s)),
        "ranks": sorted(g.ranks, key=_natural),
        "first_seen": g.first.to_json(),
        "last_seen": g.last.to_json(),
        "example": {"source": g.example.source, "line": g.example.line},
        "merged_ids": sorted(g.merged),
        "timeline": timeline,
        "timeline_truncated": len(g.timeline) >= MAX_TIMELINE,
        "diagnosis": diag,
    }


def document(groups: list[Group], acc: Groups, include_known: bool) -> dict[str, Any]:
    from . import __version__

    listed = shown(groups, include_known)
    return {
        "schema": "crashlens/v1",
        "crashlens_version": __version__,
        "kind": "mine",
        "files": acc.files,
        "bytes": acc.bytes,
        "lines": acc.lines,
        "crashes": acc.crashes,
        "include_known": include_known,
        "groups": [group_json(g) for g in listed],
        "hidden_known": len(groups) - len(listed),
    }


CSV_FIELDS = ("id", "signature", "known", "count", "title", "culprit", "sources", "ranks", "first_seen",
              "last_seen", "example")


def csv_rows(groups: list[Group]) -> Iterator[list[str]]:
    yield list(CSV_FIELDS)
    for g in groups:
        d = g.diagnosis
        yield [
            g.id, g.signature or "unknown", "yes" if g.known else "no", str(g.count), d.title,
            d.culprit.where() if d.culprit else "",
            " ".join(sorted(g.sources, key=lambda s: (g.sources[s], s))), " ".join(sorted(g.ranks, key=_natural)),
            g.first.time or f"{g.first.source}:{g.first.line}", g.last.time or f"{g.last.source}:{g.last.line}",
            f"{g.example.source}:{g.example.line}",
        ]
