"""Wires the stages for one or more sources: read -> frame -> (facts, records) -> diagnoses."""

from __future__ import annotations

from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from typing import Any

from .catalog import Catalog
from .context import FactCollector
from .diagnose import diagnose, merge
from .frame import frame_line
from .records import CrashRecord, Diagnosis, Frame
from .traceback import RecordExtractor

# Records kept for a second diagnosis once the whole source (and every start-up fact) has been read.
MAX_KEPT_RECORDS = 2000

NextBlockers = Callable[[Frame], list[dict[str, Any]]]


@dataclass(slots=True)
class SourceSession:
    """One source read incrementally; used as-is by scan, watch and ci."""

    name: str
    cat: Catalog
    next_blockers: NextBlockers | None = None
    lines: int = 0
    extractor: RecordExtractor = field(default_factory=RecordExtractor)
    facts: FactCollector | None = None
    kept: list[CrashRecord] = field(default_factory=list)
    overflow: bool = False

    def __post_init__(self) -> None:
        self.facts = FactCollector(self.cat)

    def feed(self, text: str) -> list[Diagnosis]:
        """One decoded line in; the diagnoses of the records it completed out."""
        self.lines += 1
        line = frame_line(self.name, self.lines, text)
        assert self.facts is not None
        self.facts.feed(line)
        return self._diagnose(self.extractor.feed(line))

    def finish(self) -> list[Diagnosis]:
        return self._diagnose(self.extractor.finish())

    def flush_stream(self, key: str) -> list[Diagnosis]:
        rec = self.extractor.close_stream(key)
        return self._diagnose([rec]) if rec is not None else []

    def _diagnose(self, records: Iterable[CrashRecord]) -> list[Diagnosis]:
        out = []
        assert self.facts is not None
        for rec in records:
            if len(self.kept) < MAX_KEPT_RECORDS:
                self.kept.append(rec)
            else:
                self.overflow = True
            d = diagnose(rec, self.cat, self.facts.facts, self.next_blockers)
            if d is not None:
                out.append(d)
        return out

    def final_diagnoses(self, early: list[Diagnosis]) -> list[Diagnosis]:
        """Re-diagnose with every fact of the source known (server arguments may come late)."""
        if self.overflow:
            return early
        assert self.facts is not None
        out = []
        for rec in self.kept:
            d = diagnose(rec, self.cat, self.facts.facts, self.next_blockers)
            if d is not None:
                out.append(d)
        return out


@dataclass(frozen=True, slots=True)
class ScanResult:
    sources: tuple[tuple[str, int], ...]
    diagnoses: tuple[Diagnosis, ...]

    @property
    def total_lines(self) -> int:
        return sum(n for _, n in self.sources)


def scan_lines(name: str, lines: Iterable[str], cat: Catalog, next_blockers: NextBlockers | None = None) -> tuple[int, list[Diagnosis]]:
    s = SourceSession(name, cat, next_blockers)
    early: list[Diagnosis] = []
    for text in lines:
        early.extend(s.feed(text))
    early.extend(s.finish())
    return s.lines, s.final_diagnoses(early)


def combine(per_source: list[tuple[str, int, list[Diagnosis]]]) -> ScanResult:
    all_d: list[Diagnosis] = []
    for _, _, ds in per_source:
        all_d.extend(ds)
    return ScanResult(tuple((n, c) for n, c, _ in per_source), tuple(merge(all_d)))
