"""Rounds across restarts: a log appended to over several launches, split where each launch begins.

A round is one launch of the server as the log shows it. The next round begins at the first start-up
banner (signatures/servers/*.toml `[[banner]]`) or the first new file (a followed log rotated or
truncated) after a crash: the restart that follows a crash. A second banner of the same launch (vLLM's
engine line after its API server's) comes before any crash and begins nothing, and a healthy restart
does not split a round. Rounds are counted from 1 in each source.
"""

from __future__ import annotations

from bisect import bisect_right

from ._struct import dataclass
from .catalog import Banner, search
from .records import Diagnosis

TYPE_CHECKING = False  # typing.TYPE_CHECKING without importing typing (~4 ms of start-up)
if TYPE_CHECKING:
    from collections.abc import Callable, Iterable

FATAL_KINDS = ("traceback", "partial")  # the records that end a round (graph breaks and warnings do not)


class RoundCounter:
    """Which round each line of one source is in, learnt as the lines go by."""

    __slots__ = ("_banners", "_triggers", "crashed", "starts")

    def __init__(self, banners: Iterable[Banner]) -> None:
        self._banners = tuple(banners)
        self._triggers = tuple(dict.fromkeys(b.trigger for b in self._banners))
        self.starts: list[int] = []  # the first line of rounds 2, 3, ...
        self.crashed = False  # the current round has had a fatal crash

    @property
    def current(self) -> int:
        return len(self.starts) + 1

    def round_at(self, lineno: int) -> int:
        return bisect_right(self.starts, lineno) + 1

    def line(self, lineno: int, text: str, crash_open: Callable[[], object]) -> bool:
        """A framed line (after the records it completed were counted by `record`): a banner after a crash
        begins the next round (True). `crash_open`: whether a record is still open (a rank's traceback that
        no line of its own has closed yet)."""
        for trigger in self._triggers:
            if trigger in text:
                break
        else:
            return False
        if (self.crashed or crash_open()) and any(b.trigger in text and search(b.pattern, text) for b in self._banners):
            return self.next_round(lineno)
        return False

    def new_file(self, lineno: int, crash_open: Callable[[], object]) -> bool:
        """The followed name is a new file from line `lineno` on (rotation, truncation): after a crash,
        the next round begins (True)."""
        return bool(self.crashed or crash_open()) and self.next_round(lineno)

    def record(self, kind: str, start_line: int) -> int:
        """A record completed: its round (where it began); a fatal one ends the current round."""
        r = self.round_at(start_line)
        if kind in FATAL_KINDS and r == self.current:
            self.crashed = True
        return r

    def next_round(self, lineno: int) -> bool:
        if self.starts and lineno <= self.starts[-1]:
            return False
        self.starts.append(lineno)
        self.crashed = False
        return True


@dataclass(frozen=True, slots=True)
class Round:
    """One round of one source: the crashes it had (diagnosis ids, in log order), which of them a
    previous round had too, and which of the previous round's crashes it no longer had."""

    source: str
    number: int
    first_line: int  # the first crash's line
    crashes: tuple[str, ...]
    again: tuple[str, ...]
    gone: tuple[str, ...]


def rounds_of(diagnoses: Iterable[Diagnosis]) -> tuple[Round, ...]:
    """The rounds of every source that has more than one, in source order, then round order."""
    where: dict[str, dict[int, dict[str, int]]] = {}  # source -> round -> id -> first line
    for d in diagnoses:
        for o in d.occurrences:
            ids = where.setdefault(o.source, {}).setdefault(o.round, {})
            if d.id not in ids or o.line < ids[d.id]:
                ids[d.id] = o.line
    out: list[Round] = []
    for source, by_round in where.items():
        if len(by_round) < 2 and 1 in by_round:
            continue
        before: set[str] = set()
        prev: list[str] = []
        for number in sorted(by_round):
            ids = by_round[number]
            crashes = tuple(sorted(ids, key=lambda i: ids[i]))
            out.append(Round(source, number, min(ids.values()), crashes,
                             tuple(i for i in crashes if i in before), tuple(i for i in prev if i not in ids)))
            before.update(crashes)
            prev = list(crashes)
    return tuple(out)


class LiveRounds:
    """For watch and --follow: when a crash is news. A crash is reported when first seen, and again in each
    later round it comes back in (`again`: the last change did not help); copies within a round (other
    ranks, other files, re-raises) fold into the report already made. The first report of a round says
    which crashes of the round before are gone."""

    def __init__(self) -> None:
        self._rounds: dict[str, set[int]] = {}  # diagnosis id -> rounds it was reported in
        self._ids: dict[tuple[str, int], list[str]] = {}  # (source, round) -> ids reported there, in order

    def news(self, d: Diagnosis) -> list[tuple[str, int, bool, tuple[str, ...]]]:
        """(source, round, again, gone) for each report that `d`, as merged so far, calls for now."""
        reported = self._rounds.setdefault(d.id, set())
        out: list[tuple[str, int, bool, tuple[str, ...]]] = []
        for o in sorted(d.occurrences, key=lambda o: o.round):
            if reported and o.round <= max(reported):
                continue
            again = bool(reported)
            reported.add(o.round)
            key = (o.source, o.round)
            first_here = key not in self._ids
            ids = self._ids.setdefault(key, [])
            gone: tuple[str, ...] = ()
            if first_here and o.round > 1:
                gone = tuple(i for i in self._ids.get((o.source, o.round - 1), []) if i != d.id)
            ids.append(d.id)
            out.append((o.source, o.round, again, gone))
        return out
