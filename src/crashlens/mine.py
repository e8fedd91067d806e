"""Log mining: cluster the crashes no signature knows yet, so they can become signatures."""

from __future__ import annotations

import re
from collections.abc import Iterable

from ._struct import dataclass, field
from .catalog import Catalog
from .culprit import pick_culprit, traced_chain
from .frame import frame_line
from .match import match_record
from .records import CrashRecord
from .traceback import RecordExtractor

# Volatile tokens are masked before grouping (Sentry/Drain style): the same failure in another run,
# on another rank or with other shapes lands in the same cluster.
_MASKS = [
    (re.compile(r"0x[0-9a-fA-F]+"), "<hex>"),
    (re.compile(r"(?:/[\w.@+-]+)+/?"), "<path>"),
    (re.compile(r"'[^'\n]{0,200}'|\"[^\"\n]{0,200}\""), "<str>"),
    (re.compile(r"\b\d+(?:\.\d+)?\b"), "<num>"),
    (re.compile(r"\s+"), " "),
]


def template(text: str) -> str:
    for pat, repl in _MASKS:
        text = pat.sub(repl, text)
    return text.strip()[:300]


@dataclass(slots=True)
class Cluster:
    key: str
    exception: str
    template: str
    function: str
    count: int = 0
    ranks: set[str] = field(default_factory=set)
    where: list[tuple[str, int]] = field(default_factory=list)
    example: CrashRecord | None = None
    matched_by: str = ""


def _unknown(sig_id: str | None, exact: bool, tags: tuple[str, ...]) -> bool:
    return sig_id is None or "fallback" in tags or not exact


def mine_records(records: Iterable[CrashRecord], cat: Catalog, include_known: bool = False) -> list[Cluster]:
    clusters: dict[str, Cluster] = {}
    for rec in records:
        m, _targets = match_record(rec, cat)
        if not include_known and m is not None and not _unknown(m.signature.id, m.exact, m.signature.tags):
            continue
        head = rec.headline
        exc = head.type if head else ""
        msg = (rec.dynamo.gb_type if rec.dynamo and rec.dynamo.gb_type else (head.message if head else "")) or ""
        culprit = pick_culprit(traced_chain(rec))
        func = culprit.function if culprit else ""
        tmpl = template(msg.split("\n", 1)[0])
        key = f"{exc}|{tmpl}|{func}"
        c = clusters.get(key)
        if c is None:
            c = clusters[key] = Cluster(key, exc, tmpl, func, example=rec,
                                        matched_by=(m.signature.id if m else "") + ("" if m is None or m.exact else " (near)"))
        c.count += 1
        if rec.rank:
            c.ranks.add(rec.rank)
        if len(c.where) < 20:
            c.where.append((rec.source, rec.start_line))
    return sorted(clusters.values(), key=lambda c: (-c.count, c.key))


def records_from_lines(name: str, lines: Iterable[str]) -> Iterable[CrashRecord]:
    ex = RecordExtractor()
    for n, text in enumerate(lines, 1):
        yield from ex.feed(frame_line(name, n, text))
    yield from ex.finish()


def signature_stub(c: Cluster, n: int) -> str:
    """A starting point for a new signature file; a person fills in the why and the fixes."""
    ex = c.example
    text = "\n".join(ex.text[:60]) if ex else ""
    first = re.escape(c.template.split("<", 1)[0].strip())[:80] or re.escape(c.exception)
    return (
        f'id = "mined-{n}"\nfamily = "{"dynamo" if ex is not None and ex.dynamo is not None else "other"}"\n'
        f'title = "TODO: name this failure"\nsummary = "TODO"\npriority = 40\n\n'
        f"[match]\nmessage = ['{first}']\n\n"
        f'[[examples]]\nexpect = "match"\norigin = "{ex.source if ex else ""}:{ex.start_line if ex else 0}"\n'
        f"text = '''\n{text}\n'''\n"
    )
