"""Renders an AuditReport as JSON (schema crashlens/v1) or as terminal text grouped by file."""

from __future__ import annotations

import io
import json
import os
from typing import Any

from .fixes import CONTEXTS, fixes_for, fixes_for_all
from .model import AuditReport, Finding
from .rules import Rules

SCHEMA = "crashlens/v1"
_CONTEXT_KEYS = {"fullgraph": "fullgraph", "non-fullgraph": "non_fullgraph"}


def report_to_json(report: AuditReport, rules: Rules) -> dict[str, Any]:
    findings = []
    for finding in report.findings:
        item = finding.to_json()
        item["fixes"] = {
            _CONTEXT_KEYS[context]: [note.to_json() for note in notes]
            for context, notes in fixes_for(finding, report.entry, rules).items()
        }
        findings.append(item)
    return {
        "schema": SCHEMA,
        "entry": report.entry,
        "findings": findings,
        "entry_file": report.entry_file,
        "fixes_all": {
            _CONTEXT_KEYS[context]: [note.to_json() for note in notes]
            for context, notes in fixes_for_all(report.entry, rules).items()
        },
        "functions_walked": report.functions_walked,
        "truncated_at_depth": report.truncated_at_depth,
    }


def render_json(report: AuditReport, rules: Rules) -> str:
    return json.dumps(report_to_json(report, rules), indent=2) + "\n"


def _short(path: str) -> str:
    return os.path.basename(path)


def _chain_text(finding: Finding) -> str:
    # the frames above the finding itself, as `function:line` (the file is shown when it changes)
    parts: list[str] = []
    previous_file = ""
    for frame in finding.chain[:-1]:
        where = f"{frame.function}:{frame.line}"
        if frame.file != previous_file:
            where = f"{_short(frame.file)} {where}"
            previous_file = frame.file
        parts.append(where)
    return " → ".join(parts)


def render_terminal(report: AuditReport, rules: Rules, color: bool = False, width: int = 110) -> str:
    """Findings grouped by file, numbered in tracing order, each with the fixes that remove it per context."""
    from rich.console import Console
    from rich.text import Text

    buffer = io.StringIO()
    console = Console(
        file=buffer,
        force_terminal=color,
        color_system="standard" if color else None,
        width=width,
        markup=False,
        highlight=False,
        emoji=False,
    )
    count = len(report.findings)
    head = Text()
    head.append("crashlens audit ", style="bold")
    head.append(report.entry, style="bold cyan")
    console.print(head)
    if not count:
        console.print(Text(f"no call that dynamo rejects was found from {report.entry} ({report.functions_walked} functions read)"))
        _render_notes(console, report)
        return buffer.getvalue()
    noun = "call" if count == 1 else "calls"
    console.print(
        Text(f"{count} {noun} dynamo will reject, numbered in the order tracing meets them "
             f"({report.functions_walked} functions read, nothing imported)")
    )
    console.print()
    console.print(Text("Fixes", style="bold"))
    everything = fixes_for_all(report.entry, rules)
    generic_useless = [
        fix.label.format(entry=report.entry, function="") for fix in rules.fixes
        if fix.removes == "none" and fix.categories == ("*",) and not fix.needs_cache and fix.context == "fullgraph"
    ]
    for context in CONTEXTS:
        for note in everything[context]:
            line = Text(f"  {context:<15}", style="bold")
            line.append(note.text + f" (removes all {count} at once)", style="green")
            console.print(line)
        if context == "fullgraph" and generic_useless:
            console.print(Text(f"  {'':<15}does not help: " + "; ".join(generic_useless), style="red"))

    order = {finding.key: i + 1 for i, finding in enumerate(report.findings)}
    by_file: dict[str, list[Finding]] = {}
    for finding in report.findings:
        by_file.setdefault(finding.file, []).append(finding)
    for path, findings in by_file.items():
        console.print()
        title = Text(findings[0].relpath or path, style="bold underline")
        if findings[0].relpath and findings[0].relpath != path:
            title.append(f"  ({path})", style="dim")
        console.print(title)
        for finding in findings:
            lines = ",".join(str(n) for n in (finding.lines or (finding.line,)))
            row = Text(f"  #{order[finding.key]:<3}", style="bold")
            row.append(f"{lines:<8} ", style="cyan")
            row.append(finding.function, style="bold")
            row.append("  ")
            row.append(finding.call, style="yellow")
            row.append(f"  [{finding.category}]", style="magenta")
            console.print(row)
            if finding.reason:
                console.print(Text(f"        {finding.reason}", style="dim"))
            chain = _chain_text(finding)
            if chain:
                console.print(Text(f"        via {chain}", style="dim"))
            console.print(_fix_line(fixes_for(finding, report.entry, rules)))
    _render_notes(console, report)
    return buffer.getvalue()


def _join_labels(labels: list[str]) -> str:
    """`torch.compiler.disable on a`, `torch.compiler.disable on b` → `torch.compiler.disable on a or b`."""
    out: list[str] = []
    for label in dict.fromkeys(labels):
        head, _, tail = label.rpartition(" ")
        if out and head and out[-1].startswith(head + " "):
            out[-1] = f"{out[-1]} or {tail}"
        else:
            out.append(label)
    return " or ".join(out)


def _fix_line(notes: dict[str, list[Any]]) -> Any:
    """One line per finding: what removes it under fullgraph, under non-fullgraph, and what people try in vain."""
    from rich.text import Text

    line = Text("        ")
    for i, context in enumerate(CONTEXTS):
        helps = [n.label for n in notes[context] if n.removes != "none"]
        if i:
            line.append(" | ")
        line.append(f"{context}: ")
        line.append(_join_labels(helps) if helps else "no fix listed", style="green")
    specific_useless = sorted({n.label for c in CONTEXTS for n in notes[c] if n.removes == "none" and n.id == "cache-precompute"})
    if specific_useless:
        line.append(" | not: " + "; ".join(specific_useless), style="red")
    return line


def _render_notes(console: Any, report: AuditReport) -> None:
    from rich.text import Text

    if report.truncated_at_depth:
        console.print()
        console.print(Text("The walk stopped at --max-depth on some paths; raise it to look deeper.", style="yellow"))
