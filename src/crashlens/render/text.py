"""The plain-text facts of a diagnosis, shared by the text-based CI renderers (GitHub log, JUnit body)."""

from __future__ import annotations

from ..diagnose import short_path
from ..records import Diagnosis

TYPE_CHECKING = False  # typing.TYPE_CHECKING without importing typing (~4 ms of start-up)
if TYPE_CHECKING:
    from collections.abc import Sequence


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


def plural(n: int, one: str, many: str | None = None) -> str:
    """`1 crash`, `2 crashes`: a count with the word it counts, in the right number."""
    return f"{n} {one if n == 1 else (many or one + 's')}"


def findings(ds: Sequence[Diagnosis]) -> str:
    """What a run found, in words: fatal crashes are crashes; non-fatal graph breaks and warnings are
    findings that did not crash anything, and are never counted as crashes."""
    fatal = sum(1 for d in ds if d.fatal)
    other = len(ds) - fatal
    if not ds:
        return "no crash"
    crashes = plural(fatal, "crash", "crashes")
    if not other:
        return crashes
    breaks = plural(other, "non-fatal graph break", "non-fatal graph breaks")
    return f"{crashes} and {breaks}" if fatal else f"no crash, {breaks}"


def no_workflow_commands(text: str) -> str:
    """Text in which no line can be read as a GitHub workflow command, wherever it is printed (a report on
    stdout in an Actions job is parsed line by line): a line that starts with `::` once leading blanks are
    trimmed, as the runner trims them, gets a word joiner (U+2060, invisible) between its colons, and the
    legacy `##[` form, recognised anywhere in a line, one inside it."""
    if "::" not in text and "##[" not in text:
        return text
    lines = text.split("\n")
    for i, line in enumerate(lines):
        lead = len(line) - len(line.lstrip())
        if line.startswith("::", lead):
            line = line[: lead + 1] + "\u2060" + line[lead + 1 :]
        lines[i] = line.replace("##[", "#\u2060#[")
    return "\n".join(lines)
