"""The plain-text facts of a diagnosis, shared by the text-based CI renderers (GitHub log, JUnit body)."""

from __future__ import annotations

from ..diagnose import short_path
from ..records import Diagnosis


def headline_rows(d: Diagnosis) -> list[tuple[str, str]]:
    """(label, value) rows: the error, the culprit and its source line (label "" continues the row above)."""
    rows: list[tuple[str, str]] = []
    if d.exception:
        rows.append(("error", f"{d.exception[0] or '(message only)'}: {d.exception[1]}"))
    if d.culprit is not None:
        rows.append(("culprit", f"{short_path(d.culprit.file)}:{d.culprit.line} in {d.culprit.function}"))
        if d.culprit.source:
            rows.append(("", d.culprit.source))
    return rows
