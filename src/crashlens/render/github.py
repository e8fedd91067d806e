"""GitHub Actions output: error/warning workflow commands (at most 10 of each per step) and the step summary."""

from __future__ import annotations

import secrets
from collections.abc import Mapping

from ..cipaths import Location
from ..diagnose import short_path
from ..pipeline import ScanResult
from ..records import Diagnosis
from . import markdown
from .markdown import clean
from .text import findings, headline_rows, plural

# GitHub keeps 10 error + 10 warning annotations per step and silently drops the rest.
MAX_PER_KIND = 10
MAX_MESSAGE = 3000
MAX_TITLE = 200


def escape_data(s: str) -> str:
    """The message part of a workflow command (actions/toolkit `escapeData`)."""
    return s.replace("%", "%25").replace("\r", "%0D").replace("\n", "%0A")


def escape_property(s: str) -> str:
    """A property value of a workflow command (actions/toolkit `escapeProperty`)."""
    return escape_data(s).replace(":", "%3A").replace(",", "%2C")


def _defuse(s: str) -> str:
    """The legacy `##[command]` form is parsed anywhere in a line; a word joiner keeps it from reading as one."""
    return s.replace("##[", "#\u2060#[")


def command(kind: str, props: list[tuple[str, str]], message: str) -> str:
    """One workflow command line; log text is cleaned of control characters, then escaped, so it stays one line."""
    p = ",".join(f"{k}={escape_property(_defuse(clean(v, MAX_TITLE if k == 'title' else 4096)))}" for k, v in props)
    body = _defuse("\n".join(clean(ln, MAX_MESSAGE) for ln in message.splitlines()))
    return f"::{kind} {p}::{escape_data(body[:MAX_MESSAGE])}" if p else f"::{kind}::{escape_data(body[:MAX_MESSAGE])}"


def message(d: Diagnosis, loc: Location | None) -> str:
    lines = [d.summary.strip()]
    if d.exception:
        lines.append(f"Error: {d.exception[0] or '(message only)'}: {d.exception[1]}")
    if d.culprit is not None:
        # Outside the repository the culprit cannot be annotated; name it so a reviewer finds it anyway.
        lines.append(f"Culprit: {short_path(d.culprit.file)}:{d.culprit.line} in {d.culprit.function}")
    if loc is not None:
        lines.append(f"Log: {loc.log}" + (f" ({len(d.occurrences)} occurrences)" if len(d.occurrences) > 1 else ""))
    if d.fixes:
        lines.append(f"Fix: {d.fixes[0].title}")
    lines.append(f"crashlens {d.signature or d.family} · id {d.id}")
    return "\n".join(lines)


def annotation_lines(result: ScanResult, locations: Mapping[str, Location]) -> list[str]:
    """Workflow commands for the most important crashes (the result is sorted most important first)."""
    out: list[str] = []
    count = {"error": 0, "warning": 0}
    for d in result.diagnoses:
        kind = "error" if d.fatal else "warning"
        if count[kind] >= MAX_PER_KIND:
            continue
        count[kind] += 1
        loc = locations.get(d.id)
        props: list[tuple[str, str]] = []
        if loc is not None and loc.path is not None:
            props += [("file", loc.path), ("line", str(loc.line))]
        props.append(("title", f"crashlens: {d.title}"))
        out.append(command(kind, props, message(d, loc)))
    return out


def _report(result: ScanResult, locations: Mapping[str, Location], annotated: int) -> list[str]:
    """The plain-text report for the job log. It echoes log text, so the caller fences it."""
    ds = result.diagnoses
    out = [f"crashlens: {findings(ds)} in {plural(len(result.sources), 'log')}, {plural(result.total_lines, 'line')}"]
    if annotated < len(ds):
        more = len(ds) - annotated
        out.append(f"{plural(more, 'more finding is', 'more findings are')} not annotated (GitHub keeps"
                   f" {MAX_PER_KIND} per kind per step): see the job summary.")
    for n, d in enumerate(ds, 1):
        loc = locations.get(d.id)
        out.append(f"{n}. [{'fatal' if d.fatal else 'graph break'}] {d.title}  (id {d.id})")
        out.append(f"   {d.summary.strip()}")
        out += [f"   {(label + ':') if label else '':<9}{value}" for label, value in headline_rows(d)]
        if loc is not None:
            out.append(f"   log:     {loc.log}")
            if loc.path is not None:
                out.append(f"   annotated at {loc.path}:{loc.line}")
        for f in d.fixes[:3]:
            out.append(f"   fix {f.rank}:   [{f.kind}] {f.title}")
    return [_defuse(clean(ln)) for s in out for ln in s.splitlines()]


def render(result: ScanResult, locations: Mapping[str, Location], token: str | None = None) -> str:
    """Annotations first, then the readable report between ::stop-commands:: fences (log text cannot run commands)."""
    ann = annotation_lines(result, locations)
    lines = list(ann)
    if result.diagnoses:
        report = _report(result, locations, len(ann))
        token = token or secrets.token_hex(16)
        while any(token in ln for ln in report):  # a log that guessed the token must not end the fence
            token = secrets.token_hex(16)
        lines += [f"::stop-commands::{token}", *report, f"::{token}::"]
    else:
        lines.append(f"crashlens: no crash found in {plural(len(result.sources), 'log')},"
                     f" {plural(result.total_lines, 'line')}")
    return "\n".join(lines) + "\n"


def summary(result: ScanResult, locations: Mapping[str, Location], max_bytes: int = markdown.SUMMARY_LIMIT) -> str:
    """The Markdown for $GITHUB_STEP_SUMMARY: every crash, including those past the annotation limit."""
    return markdown.render(result, locations, max_bytes=max_bytes, annotated=len(annotation_lines(result, locations)))
