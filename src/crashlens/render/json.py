"""The crashlens/v1 JSON document: a public contract (see README, "JSON output")."""

from __future__ import annotations

import json

from .. import __version__
from ..pipeline import ScanResult
from ..records import Diagnosis

TYPE_CHECKING = False  # typing.TYPE_CHECKING without importing typing (~4 ms of start-up)
if TYPE_CHECKING:
    from typing import Any

SCHEMA = "crashlens/v1"


def diagnosis_json(d: Diagnosis) -> dict[str, Any]:
    return {
        "id": d.id,
        "family": d.family,
        "signature": d.signature,
        "title": d.title,
        "summary": d.summary,
        "confidence": d.confidence,
        "fatal": d.fatal,
        "exception": {"type": d.exception[0], "message": d.exception[1]} if d.exception else None,
        "culprit": d.culprit.to_json() if d.culprit else None,
        "culprit_source": d.culprit.source if d.culprit else None,
        "callee": d.callee,
        "chain": [f.to_json() for f in d.chain],
        "context": d.context.to_json(),
        "occurrences": [o.to_json() for o in d.occurrences],
        "ranks": d.ranks,
        "fixes": [f.to_json() for f in d.fixes],
        "why": d.why,
        "near_match": d.near_match,
        "gb_id": d.gb_id,
        "warnings": list(d.warnings),
        "next": list(d.next),
    }


def document(result: ScanResult) -> dict[str, Any]:
    return {
        "schema": SCHEMA,
        "crashlens_version": __version__,
        "sources": [{"name": n, "lines": c} for n, c in result.sources],
        "diagnoses": [diagnosis_json(d) for d in result.diagnoses],
    }


def dumps(doc: Any, indent: int | None = None) -> str:
    """JSON text of `doc` that is safe to print in a CI log: `#` is written `\\u0023` where it would spell
    `##[`, the legacy GitHub workflow-command prefix the runner finds anywhere in a line. The value is the
    same; no line of JSON can start with `::` (strings hold no line breaks)."""
    return json.dumps(doc, indent=indent, ensure_ascii=False).replace("##[", "#\\u0023[")


def render(result: ScanResult) -> str:
    return dumps(document(result), indent=2) + "\n"


def render_line(d: Diagnosis, round: int | None = None, again: bool | None = None, gone: tuple[str, ...] = ()) -> str:
    """One diagnosis as a single JSON line (jsonl streams, --exec payloads), with the round it is reported
    in (watch: the round in which it completed; scan: its first) and `again`: whether it came back from
    an earlier round (watch: this report is of a crash reported in an earlier round; scan: it is seen in
    more than one), and `gone`: the ids of the previous round's crashes this round no longer has."""
    rounds = sorted({o.round for o in d.occurrences}) or [1]
    doc = {"schema": SCHEMA, "crashlens_version": __version__, "diagnosis": diagnosis_json(d),
           "round": rounds[0] if round is None else round, "again": len(rounds) > 1 if again is None else again,
           "gone": list(gone)}
    return dumps(doc)
