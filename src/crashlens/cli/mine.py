"""`crashlens mine PATH...`: every crash of many logs grouped by diagnosis id, on a local or Ray engine."""

from __future__ import annotations

import os
import sys
from typing import Any

import click

FORMATS = ("table", "json", "csv", "html")
_LOG_COLUMNS = {4, 5, 6, 7, 10}  # csv_rows' title, culprit, sources, ranks and example


def mine_paths(paths: tuple[str, ...], output: str | None = None) -> list[str]:
    """Files as given, directories walked recursively, globs expanded (as `ci` reads them); an
    --output that is one of them is refused."""
    from ..cipaths import expand_inputs
    from ..read import InputError

    if "-" in paths:
        raise click.UsageError("-: mine reads log files and directories, not stdin (a pipe: /dev/stdin)")
    try:
        files = expand_inputs(paths, outputs=[output] if output else [])
    except InputError as e:
        raise click.UsageError(str(e)) from None
    if output is not None:
        real = os.path.realpath(output)
        if any(os.path.realpath(f) == real for f in files):
            raise click.UsageError(f"--output {output}: is one of the input logs; refusing to overwrite it")
    return files


def run_mine(files: list[str], signatures: tuple[str, ...], engine: str, jobs: int | None,
             address: str | None) -> tuple[Any, list[Any]]:
    """Mine every file on the engine, with a progress bar on a terminal; (the merge, its groups)."""
    from ..engine import run
    from ..mine import Groups
    from ..progress import Progress

    acc = Groups()
    sizes = 0
    for f in files:
        try:
            sizes += os.path.getsize(f)
        except OSError:
            pass
    # Absolute: Ray workers may run in another directory; the catalog is the same either way.
    sigs = tuple(os.path.abspath(s) for s in signatures)
    with Progress(sizes, len(files), "mining") as bar:
        def on_result(r: Any) -> None:
            acc.add(r)
            bar.advance(r.bytes, 1, sum(g.count for g in r.groups))

        run(engine, files, sigs, jobs, address, on_result)
    groups = acc.finish()
    for _, w in acc.warnings:
        sys.stderr.write(f"crashlens: warning: {w}\n")
    return acc, groups


@click.command("mine")
@click.argument("paths", nargs=-1, required=True, metavar="PATH...")
@click.option("--all", "include_known", is_flag=True, help="Show every group, not only crashes no signature knows.")
@click.option("--format", "-f", "fmt", type=click.Choice(FORMATS), default="table", show_default=True,
              help="table: most frequent first; json: the crashlens/v1 mine document; csv; html: one page.")
@click.option("--output", "-o", metavar="FILE", default=None, help="Write the report to FILE (default: stdout).")
@click.option("--engine", type=click.Choice(("local", "ray")), default="local", show_default=True,
              help="local: worker processes on this machine; ray: Ray tasks (pip install 'crashlens[ray]').")
@click.option("-j", "--jobs", type=click.IntRange(min=1), default=None, metavar="N",
              help="Local engine: up to N worker processes (default: one per core).")
@click.option("--ray-address", metavar="ADDR", default=None,
              help="Ray engine: join the cluster at ADDR (ray://host:10001, or auto); default: a local Ray instance.")
@click.option("--stub", is_flag=True, help="Print a draft signature (TOML) for each unknown group shown.")
@click.option("--signatures", "extra", multiple=True, metavar="DIR", help="Extra signature directory.")
def mine(paths: tuple[str, ...], include_known: bool, fmt: str, output: str | None, engine: str,
         jobs: int | None, ray_address: str | None, stub: bool, extra: tuple[str, ...]) -> int:
    """Group every crash in log files, directories (recursively) and .gz logs by diagnosis id.

    \b
    crashlens mine logs/                          unknown crashes, most frequent first
    crashlens mine logs/ --all --format json      every group, the crashlens/v1 document
    crashlens mine logs/ --all -f html -o report.html
    crashlens mine logs/ --engine ray --ray-address auto

    Exit codes: 0 done (whatever was found), 2 usage or input error.
    """
    from ..mine import csv_rows, document, shown

    if ray_address is not None and engine != "ray":
        raise click.UsageError("--ray-address is for --engine ray")
    if output is not None:
        from .ci import _check_output

        _check_output(output)
    files = mine_paths(paths, output)
    acc, groups = run_mine(files, extra, engine, jobs, ray_address)
    listed = shown(groups, include_known)
    if fmt == "json":
        import json

        text = json.dumps(document(groups, acc, include_known), indent=2, ensure_ascii=False) + "\n"
    elif fmt == "csv":
        import csv
        import io

        buf = io.StringIO()
        w = csv.writer(buf, lineterminator="\n")
        for row in csv_rows(listed):
            # Log text may start like a formula; the times and ids crashlens writes do not.
            w.writerow([_cell(c) if i in _LOG_COLUMNS else c for i, c in enumerate(row)])
        text = buf.getvalue()
    elif fmt == "html":
        from ..render.html import render_mine

        text = render_mine(document(groups, acc, include_known))
    else:
        text = _table(listed, acc, len(groups) - len(listed), include_known, output is None)
    if stub:
        text += _stubs(listed, files, extra)
    _write(text, output)
    return 0


def _cell(value: str) -> str:
    """A CSV cell a spreadsheet will not run: log text starting with = + - @ is read as a formula."""
    return "'" + value if value[:1] in ("=", "+", "-", "@", "\t", "\r") else value


def _write(text: str, output: str | None) -> None:
    # Plain writes, never a console: machine-readable output is not wrapped at terminal width.
    if output is None:
        sys.stdout.write(text)
        sys.stdout.flush()
        return
    from .ci import write_atomic

    try:
        write_atomic(output, text)
    except OSError as e:
        raise click.UsageError(f"--output {output}: cannot write ({e.strerror or e})") from None


def _table(groups: list[Any], acc: Any, hidden: int, include_known: bool, to_terminal: bool) -> str:
    """The groups as a rich table (its own width when written to a file or a pipe)."""
    import io

    from rich import box
    from rich.console import Console
    from rich.table import Table
    from rich.text import Text

    tty = to_terminal and sys.stdout.isatty()
    buf = io.StringIO()
    width = None if tty else 160
    console = Console(file=buf, width=width or Console().width, force_terminal=tty, no_color=not tty or None,
                      markup=False, highlight=False, emoji=False)
    summary = (f"{acc.crashes} crash{'es' if acc.crashes != 1 else ''} in {len(groups) + hidden} group"
               f"{'s' if len(groups) + hidden != 1 else ''} from {acc.files} file{'s' if acc.files != 1 else ''}")
    if not groups:
        what = "crashes" if include_known else "unknown crashes"
        note = f"; {hidden} known group{'s' if hidden != 1 else ''} (--all shows them)" if hidden else ""
        console.print(Text(f"no {what}: {summary}{note}"))
        return buf.getvalue()
    # Every row starts with a border: no wrapped cell can begin a line (a CI runner reads `::cmd::`).
    t = Table(box=box.SQUARE, show_lines=False, header_style="bold", expand=False)
    for col, kw in (("#", {"justify": "right"}), ("count", {"justify": "right"}), ("signature", {}),
                    ("crash", {"ratio": 3}), ("culprit", {"ratio": 2}), ("files", {"justify": "right"}),
                    ("ranks", {}), ("first seen", {}), ("last seen", {}), ("example", {}), ("id", {})):
        t.add_column(col, overflow="fold", **kw)  # type: ignore[arg-type]
    from ..diagnose import short_path

    for n, g in enumerate(groups, 1):
        d = g.diagnosis
        culprit = f"{short_path(d.culprit.file)}:{d.culprit.line} in {d.culprit.function}" if d.culprit else ""
        ranks = sorted(g.ranks)
        t.add_row(
            Text(str(n)), Text(str(g.count)), Text(g.signature or "unknown"), Text(d.title), Text(culprit),
            Text(str(len(g.sources))), Text(", ".join(ranks[:8]) + (" …" if len(ranks) > 8 else "")),
            Text(g.first.time or f"{g.first.source}:{g.first.line}"),
            Text(g.last.time or f"{g.last.source}:{g.last.line}"),
            Text(f"{g.example.source}:{g.example.line}"), Text(g.id),
        )
    console.print(t)
    tail = summary + (f"; {hidden} known group{'s' if hidden != 1 else ''} hidden (--all shows them)" if hidden else "")
    console.print(Text(tail))
    if any(not g.known for g in groups):
        console.print(Text("draft a signature for a group: crashlens signatures new --from ID PATH..."))
    return buf.getvalue()


def _stubs(groups: list[Any], files: list[str], extra: tuple[str, ...]) -> str:
    from ..stub import DraftError, draft_signature

    out = []
    for g in groups:
        if g.known:
            continue
        try:
            out.append(f"# draft signature for group {g.id}; save as signatures/mined-{g.id}.toml\n"
                       + draft_signature(g, extra, groups))
        except DraftError as e:
            sys.stderr.write(f"crashlens: warning: {e}\n")
    return "\n" + "\n".join(out) if out else ""
