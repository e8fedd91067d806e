"""`crashlens scan FILE...`: read logs (or stdin), find crashes, diagnose them."""

from __future__ import annotations

import sys
from typing import Any

import click

from ..catalog import get_catalog
from ..pipeline import ScanResult, combine, scan_lines
from ..read import iter_lines, open_source


def next_blockers_hook(enabled: bool) -> Any:
    """The static audit of the installed culprit library, if present (crashlens audit)."""
    if not enabled:
        return None
    try:
        from ..audit import next_blockers
    except ImportError:
        return None

    def hook(frame: Any) -> list[dict[str, Any]]:
        return [f.to_json() for f in next_blockers(frame.file, frame.function, frame.line)]

    return hook


def run_scan(files: tuple[str, ...], signatures: tuple[str, ...], audit: bool) -> ScanResult:
    cat = get_catalog(list(signatures))
    hook = next_blockers_hook(audit)
    names = list(files) or ["-"]
    per_source = []
    for name in names:
        src, fh = open_source(name)
        try:
            n, diags = scan_lines(src.name, iter_lines(fh), cat, hook)
        finally:
            if src.path is not None:
                fh.close()
        per_source.append((src.name, n, diags))
    return combine(per_source)


def color_choice(color: bool | None) -> bool | None:
    return color


@click.command("scan")
@click.argument("files", nargs=-1, type=str)
@click.option("--format", "fmt", type=click.Choice(["terminal", "json", "jsonl"]), default="terminal",
              show_default=True, help="Output format; json is the crashlens/v1 document.")
@click.option("--signatures", "signatures", multiple=True, metavar="DIR",
              help="Extra signature directory (overrides built-ins by id). Also $CRASHLENS_SIGNATURES.")
@click.option("--audit/--no-audit", default=True, show_default=True,
              help="Add the next blockers found statically in the installed culprit library.")
@click.option("--color/--no-color", default=None, help="Force colour on or off (default: auto, NO_COLOR respected).")
@click.option("--follow", is_flag=True, help="Stream: pass input through and print diagnoses as crashes complete.")
def scan(files: tuple[str, ...], fmt: str, signatures: tuple[str, ...], audit: bool, color: bool | None,
         follow: bool) -> int:
    """Scan log FILES (or stdin, or -) for torch.compile crashes. Exit 1 if a fatal crash was found."""
    if follow:
        try:
            from .watch import follow_stdin
        except ImportError:
            raise click.UsageError("--follow is not available in this build") from None
        return int(follow_stdin(fmt=fmt, signatures=signatures, audit=audit, color=color))
    if not files and sys.stdin.isatty():
        raise click.UsageError("no log file given (pass FILE..., or pipe a log: cmd 2>&1 | crashlens)")
    result = run_scan(files, signatures, audit)
    out = sys.stdout
    if fmt == "json":
        from ..render.json import render

        out.write(render(result))
    elif fmt == "jsonl":
        from ..render.json import render_line

        for d in result.diagnoses:
            out.write(render_line(d) + "\n")
    else:
        from ..render.terminal import render as render_terminal

        render_terminal(result, out, color=color_choice(color))
    return 1 if any(d.fatal for d in result.diagnoses) else 0
