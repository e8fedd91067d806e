"""Markdown CI summary (GitHub step summary, GitLab, any system): log text escaped so it cannot inject markup."""

from __future__ import annotations

import re
from collections.abc import Mapping

from ..cipaths import Location
from ..diagnose import short_path
from ..pipeline import ScanResult
from ..records import Diagnosis
from .text import findings, no_workflow_commands, plural

# GitHub refuses a step summary over 1 MiB; stay well below, whatever else the step wrote.
SUMMARY_LIMIT = 1_000_000
MAX_FIELD = 2000  # characters of one log-derived field (an exception message can be a 64 KiB line)
MAX_TABLE_ROWS = 200

# C0/C1 controls, DEL, lone surrogates and the Unicode line/paragraph separators: never part of what a person reads.
_CONTROL = re.compile(r"[\x00-\x08\x0b-\x1f\x7f-\x9f\u2028\u2029\ud800-\udfff]")
_ANSI = re.compile(r"\x1b\[[0-?]*[ -/]*[@-~]|\x1b\][^\x07\x1b]*(?:\x07|\x1b\\)?")
_MD_PUNCT = re.compile(r"([\\`*_\[\]#|~])")
_BLOCK_START = re.compile(r"^(\s*)([-+*=>#]|\d+[.)])")
_TICKS = re.compile(r"`+")
# `@name` is a mention on GitHub (and GitLab): a decorator such as @torch.compiler.disable, or an @user in
# log text, would notify someone. Mentions are never made inside code, so such words become code spans.
_MENTION = re.compile(r"(?<![\w@`])@[A-Za-z0-9_][\w.\-]*")
_FENCE_RUN = re.compile(r"`{3,}|~{3,}")


def clean(text: str, limit: int = MAX_FIELD) -> str:
    """Log text as a person reads it on one line: escape sequences and control characters gone, length bounded."""
    s = _CONTROL.sub("", _ANSI.sub("", text.replace("\t", " ")))
    return s if len(s) <= limit else s[: limit - 1] + "…"


def inline(text: str, limit: int = MAX_FIELD) -> str:
    """Text for a Markdown paragraph or table cell: no markup, no HTML, no line breaks, no @mentions
    (`|` is escaped too, so a value cannot end a table cell)."""
    s = clean(" ".join(text.splitlines()), limit)
    out: list[str] = []
    i = 0
    for m in _MENTION.finditer(s):
        out.append(_escape(s[i : m.start()]))
        out.append(f"`{m.group()}`")
        i = m.end()
    out.append(_escape(s[i:]))
    return "".join(out)


def _escape(s: str) -> str:
    s = s.replace("&", "&amp;").replace("<", "&lt;").replace(">", "&gt;")
    return _MD_PUNCT.sub(r"\\\1", s)


def code(text: str, limit: int = MAX_FIELD) -> str:
    """A code span whose fence is longer than any backtick run inside, so the text cannot close it."""
    s = clean(" ".join(text.splitlines()), limit)
    if not s.strip() or any(c in s for c in "<>&"):
        # Safe in a code span for GitHub, but not for every Markdown consumer: escaped text never carries a tag.
        return inline(s) or "(empty)"
    longest = max((len(m) for m in _TICKS.findall(s)), default=0)
    fence = "`" * (longest + 1)
    pad = " " if s.startswith("`") or s.endswith("`") or (s.startswith(" ") and s.endswith(" ")) else ""
    return f"{fence}{pad}{s}{pad}{fence}"


def prose(text: str, limit: int = MAX_FIELD) -> str:
    """One line of catalog prose with `code spans` kept as code and everything else escaped.

    Catalog templates carry log values (callee, file, function), so the text is untrusted: a backtick run without
    its partner is escaped, and a line cannot start a block (list, heading, quote) of its own.
    """
    s = clean(text, limit)
    out: list[str] = []
    i = 0
    while i < len(s):
        m = _TICKS.search(s, i)
        if m is None:
            out.append(inline(s[i:], limit))
            break
        out.append(inline(s[i : m.start()], limit))
        n = len(m.group())
        close = next((c for c in _TICKS.finditer(s, m.end()) if len(c.group()) == n), None)
        if close is None:
            out.append("\\`" * n)
            i = m.end()
            continue
        out.append(code(s[m.end() : close.start()], limit))
        i = close.end()
    line = "".join(out)
    return _BLOCK_START.sub(lambda b: b.group(1) + _escape_marker(b.group(2)), line, count=1)


def _escape_marker(marker: str) -> str:
    return marker[:-1] + "\\" + marker[-1] if marker[-1] in ".)" else "\\" + marker


def prose_lines(text: str, indent: str = "") -> list[str]:
    """Catalog prose as Markdown lines. A run of indented lines is a code example and becomes a fenced
    code block (a run starting with "- " is a list); everything else is one escaped paragraph."""
    out: list[str] = []
    for kind, lines in _blocks(text):
        if kind == "code":
            out += ["", *fenced(lines, indent), ""]
        elif kind == "list":
            out += [indent + ("- " + prose(ln.strip()[2:]) if ln.strip().startswith("- ") else "  " + prose(ln.strip()))
                    for ln in lines]
        else:
            out += [indent + prose(ln.strip()) for ln in lines]
    while out and not out[-1]:
        out.pop()
    while out and not out[0]:
        out.pop(0)
    return out


def _blocks(text: str) -> list[tuple[str, list[str]]]:
    """(kind, lines) runs: "prose", "code" (indented lines), "list" (indented lines starting "- ")."""
    blocks: list[tuple[str, list[str]]] = []
    for raw in text.strip("\n").splitlines():
        if not raw.strip():
            continue
        kind = "code" if raw[:1] in (" ", "\t") and raw.strip() else "prose"
        if blocks and blocks[-1][0] != "prose" and kind == "code":
            blocks[-1][1].append(raw)
        elif blocks and blocks[-1][0] == kind == "prose":
            blocks[-1][1].append(raw)
        else:
            blocks.append((kind, [raw]))
    return [("list" if k == "code" and ls[0].strip().startswith("- ") else k, ls) for k, ls in blocks]


def fenced(lines: list[str], indent: str = "") -> list[str]:
    """A fenced Python code block: the text as written (code is inert in CommonMark), control characters
    gone, and a fence longer than any backtick run inside, so the text cannot close it."""
    body = [clean(ln.expandtabs(4)).rstrip() for ln in lines]
    margin = min((len(ln) - len(ln.lstrip()) for ln in body if ln.strip()), default=0)
    body = [ln[margin:] for ln in body]
    longest = max((len(m) for ln in body for m in _FENCE_RUN.findall(ln)), default=0)
    fence = "`" * max(3, longest + 1)
    return [f"{indent}{fence}python", *(indent + ln if ln else "" for ln in body), f"{indent}{fence}"]


def where(d: Diagnosis, loc: Location | None) -> str:
    """Where a person should look, as plain text (escape before use)."""
    if loc is not None and loc.path is not None:
        return f"{loc.path}:{loc.line}"
    if d.culprit is not None:
        return f"{short_path(d.culprit.file)}:{d.culprit.line}"
    return loc.log if loc is not None else (f"{d.occurrences[0].source}:{d.occurrences[0].line}" if d.occurrences else "?")


def _severity(d: Diagnosis) -> str:
    return "fatal" if d.fatal else "graph break"


def section(n: int, d: Diagnosis, loc: Location | None) -> str:
    mark = "❌" if d.fatal else "⚠️"
    lines = [f"### {n}. {mark} {inline(d.title, 300)}", "", *prose_lines(d.summary), ""]
    if d.exception:
        exc_type = d.exception[0] or "(message only)"
        lines.append(f"- **Error:** {code(f'{exc_type}: {d.exception[1]}')}")
    if d.culprit:
        culprit = f"- **Culprit:** {code(f'{short_path(d.culprit.file)}:{d.culprit.line} in {d.culprit.function}')}"
        if d.culprit.source:
            culprit += f" · {code(d.culprit.source)}"
        lines.append(culprit)
    if d.callee:
        lines.append(f"- **Callee:** {code(d.callee)}")
    if loc is not None and loc.kind == "culprit" and loc.path is not None:
        lines.append(f"- **In this repository:** {code(f'{loc.path}:{loc.line}')}")
    log = f"- **Log:** {code(d.occurrences[0].source + ':' + str(d.occurrences[0].line))}" if d.occurrences else ""
    if log:
        ranks = d.ranks
        if ranks:
            log += " · ranks " + inline(", ".join(ranks[:8]) + (", …" if len(ranks) > 8 else ""))
        if len(d.occurrences) > 1:
            log += f" · seen {len(d.occurrences)} times"
        lines.append(log)
    ctx = d.context
    bits = [ctx.mode or ctx.server or ("plain torch.compile" if d.family == "dynamo" else "no server detected")]
    if ctx.fullgraph is not None and d.family == "dynamo":
        bits.append("fullgraph=True" if ctx.fullgraph else "graph breaks allowed")
    lines.append(f"- **Context:** {inline(' · '.join(bits))}")
    lines.append(f"- **Match:** {inline(d.signature or d.family)} · {_severity(d)} · confidence {d.confidence:.2f}"
                 f" · id {code(d.id)}")
    if d.fixes:
        lines += ["", "**Fixes, best first**", ""]
        for f in d.fixes:
            lines.append(f"{f.rank}. **\\[{inline(f.kind)}\\]** {prose(f.title)}")
            if f.file:
                lines.append(f"   change: {code(short_path(f.file) + (f':{f.line}' if f.line else ''))}  ")
            lines += prose_lines(f.detail, "   ")
    for w in d.warnings:
        lines += ["", f"> ⚠️ {prose(w)}"]
    if d.why.strip():
        lines += ["", "<details><summary>Why</summary>", "", *prose_lines(d.why), "", "</details>"]
    return "\n".join(lines) + "\n"


def render(result: ScanResult, locations: Mapping[str, Location] | None = None, max_bytes: int = SUMMARY_LIMIT,
           annotated: int | None = None) -> str:
    """The summary of a CI run (see _render); no line of it can run a workflow command where it is printed."""
    return no_workflow_commands(_render(result, locations, max_bytes, annotated))


def _render(result: ScanResult, locations: Mapping[str, Location] | None, max_bytes: int,
            annotated: int | None) -> str:
    """The summary of a CI run: a table of every distinct crash, then one section each, within max_bytes.

    `annotated`: how many crashes got a GitHub annotation (the rest are only here), or None outside GitHub.
    """
    locs = locations or {}
    ds = result.diagnoses
    n_src = len(result.sources)
    title = f"## crashlens: {findings(ds)} in {plural(n_src, 'log')}, {plural(result.total_lines, 'line')}"
    head = [title, ""]
    if not ds:
        return "\n".join(head + ["No torch.compile crash found.", ""])
    if annotated is not None and annotated < len(ds):
        note = (f"GitHub shows at most 10 annotations of each kind per step: the first {annotated} are annotated,"
                " every crash is listed here.")
        head += [note, ""]
    head += ["| # | Severity | Crash | Where | Id |", "|---|---|---|---|---|"]
    for n, d in enumerate(ds[:MAX_TABLE_ROWS], 1):
        head.append(f"| {n} | {'❌ fatal' if d.fatal else '⚠️ graph break'} | {inline(d.title, 200)} |"
                    f" {inline(where(d, locs.get(d.id)), 300)} | {inline(d.id)} |")
    if len(ds) > MAX_TABLE_ROWS:
        head.append(f"| … | | {len(ds) - MAX_TABLE_ROWS} more | | |")
    text = "\n".join(head) + "\n\n"
    used = len(text.encode())
    reserve = 200  # the "not shown" note
    for n, d in enumerate(ds, 1):
        sec = section(n, d, locs.get(d.id)) + "\n"
        size = len(sec.encode())
        if used + size + reserve > max_bytes:
            text += (f"*{plural(len(ds) - n + 1, 'more finding')} not shown here"
                     " (size limit); see the SARIF or JSON report.*\n")
            break
        text += sec
        used += size
    return text
