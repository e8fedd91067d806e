"""Draft signatures for mined groups: a TOML file whose examples are the group's own records from the logs,
checked with `signatures check` before it is handed out."""

from __future__ import annotations

import json
import os
import re
import tempfile
from collections.abc import Iterator

from .errors import UserError
from .frame import frame_line
from .read import iter_lines, open_source
from .records import CrashRecord
from .traceback import RecordExtractor

TYPE_CHECKING = False
if TYPE_CHECKING:
    from .mine import Group

# Lines read past a record's first line to find where it ends.
MAX_RECORD_LINES = 5000
# Positive examples taken from the logs (distinct sources first).
MAX_POSITIVES = 2


class DraftError(UserError):
    """No draft that passes `signatures check` could be made for a group."""


def record_at(path: str, line: int, name: str | None = None) -> CrashRecord | None:
    """The crash record that starts at `line` of a log, read again from the file."""
    ex = RecordExtractor()
    src, fh = open_source(path)
    name = name or src.name
    try:
        for n, text in enumerate(_lines(fh), 1):
            if n < line:
                continue
            if n > line + MAX_RECORD_LINES:
                break
            for rec in ex.feed(frame_line(name, n, text)):
                if rec.start_line == line:
                    return rec
        for rec in ex.finish():
            if rec.start_line == line:
                return rec
    finally:
        fh.close()
    return None


def _lines(fh: object) -> Iterator[str]:
    import zlib

    try:
        yield from iter_lines(fh)  # type: ignore[arg-type]
    except (EOFError, OSError, zlib.error):
        return


def lines_before(path: str, line: int, n: int = 6) -> list[str]:
    """Up to `n` log lines before `line`: real log text that is not this crash."""
    _src, fh = open_source(path)
    out: list[str] = []
    try:
        for k, text in enumerate(_lines(fh), 1):
            if k >= line:
                break
            out.append(text)
            out = out[-n:]
    finally:
        fh.close()
    return [t for t in out if t.strip()]


def _toml(s: str) -> str:
    """A TOML basic string on one line: JSON's escapes are TOML's (DEL aside), and no newline is written,
    so no terminal or pipe can wrap it."""
    return json.dumps(s, ensure_ascii=False).replace("\x7f", "\\u007f")


def _literal_head(template_text: str) -> str:
    """The message's words up to the first masked token, as a regular expression."""
    head = template_text.split("<", 1)[0].strip().rstrip(":").strip()
    return re.escape(head[:80]) if len(head) >= 8 else ""


def toml_text(sig_id: str, g: Group, match: dict[str, object], positives: list[tuple[str, str]],
              negatives: list[tuple[str, str]]) -> str:
    d = g.diagnosis
    family = "dynamo" if d.family == "dynamo" else "other"
    out = [
        f"id = {_toml(sig_id)}",
        f"name = {_toml(sig_id)}",
        f"family = {_toml(family)}",
        f"title = {_toml('TODO: name this failure (' + d.title[:120] + ')')}",
        f"summary = {_toml('TODO: what it means for the person reading the log')}",
        f"why = {_toml('TODO: why it happens')}",
        "priority = 40",
        "confidence = 0.6",
        'tags = ["mined"]',
        "",
        "[match]",
    ]
    for key, val in match.items():
        out.append(f"{key} = {'true' if val is True else '[' + ', '.join(_toml(str(v)) for v in val) + ']'}")  # type: ignore[attr-defined]
    out += [
        "",
        "[[fixes]]",
        "rank = 50",
        'kind = "report"',
        f"title = {_toml('TODO: the fix that works for this crash, best first')}",
        f"detail = {_toml('TODO: how, and in which context (fullgraph=True or graph breaks allowed)')}",
    ]
    for expect, (origin, text) in [("match", p) for p in positives] + [("no-match", n) for n in negatives]:
        out += ["", "[[examples]]", f"expect = {_toml(expect)}", f"origin = {_toml(origin)}", f"text = {_toml(text)}"]
    return "\n".join(out) + "\n"


def draft_signature(g: Group, extra_dirs: tuple[str, ...] = (), others: list[Group] | None = None,
                    paths: dict[str, str] | None = None) -> str:
    """A draft signature for group `g` that `crashlens signatures check` passes: match on the exception
    type and the message's fixed words, positive examples the group's records, a negative one another
    group's record (or the log lines before the crash). `paths`: source name -> file to read."""
    paths = paths or {}
    d = g.diagnosis
    positives: list[tuple[str, str]] = []
    used: set[str] = set()
    for s in [g.example, *g.timeline]:
        if len(positives) >= MAX_POSITIVES or s.source in used:
            continue
        rec = record_at(paths.get(s.source, s.source), s.line, s.source)
        if rec is not None and rec.text:
            positives.append((f"mined from {s.source}:{s.line}", "\n".join(rec.text)))
            used.add(s.source)
    if not positives:
        raise DraftError(f"group {g.id}: its crash could not be read back from {g.example.source}")
    negatives: list[tuple[str, str]] = []
    for o in others or []:
        if o.id == g.id:
            continue
        rec = record_at(paths.get(o.example.source, o.example.source), o.example.line, o.example.source)
        if rec is not None and rec.text:
            negatives.append((f"another crash, mined from {o.example.source}:{o.example.line}", "\n".join(rec.text)))
            break
    before = lines_before(paths.get(g.example.source, g.example.source), g.example.line)
    plain = ("log lines before the crash, " + f"{g.example.source}:{g.example.line}", "\n".join(before))
    exc = d.exception[0] if d.exception else ""
    from .mine import template

    head = _literal_head(template(d.exception[1])) if d.exception else ""
    candidates: list[dict[str, object]] = []
    base: dict[str, object] = {"dynamo": True} if d.family == "dynamo" else {}
    if exc and head:
        candidates.append({**base, "exception": ["^" + re.escape(exc) + "$"], "message": [head]})
    if exc:
        candidates.append({**base, "exception": ["^" + re.escape(exc) + "$"]})
    if head:
        candidates.append({**base, "message": [head]})
    sig_id = f"mined-{g.id}"
    for match in candidates:
        for neg in ([negatives[0]] if negatives else []) + ([plain] if before else []):
            text = toml_text(sig_id, g, match, positives, [neg])
            if passes(text, sig_id, extra_dirs):
                return text
    raise DraftError(f"group {g.id}: no draft signature that passes `signatures check` (edit one by hand from"
                     f" {g.example.source}:{g.example.line})")


def passes(text: str, sig_id: str, extra_dirs: tuple[str, ...] = ()) -> bool:
    """Whether `signatures check` passes this signature file, next to the catalog in use."""
    from .catalog import CatalogError, load_catalog
    from .sigcheck import check_signature, lint

    with tempfile.TemporaryDirectory(prefix="crashlens-draft-") as tmp:
        with open(os.path.join(tmp, f"{sig_id}.toml"), "w", encoding="utf-8") as fh:
            fh.write(text)
        try:
            full = load_catalog([*extra_dirs, tmp])
        except CatalogError:
            return False
        sig = full.get(sig_id)
        if sig is None:
            return False
        mine = [p for p in lint(full) if sig_id in p or tmp in p]
        return not mine and all(r.ok for r in check_signature(sig, full))
