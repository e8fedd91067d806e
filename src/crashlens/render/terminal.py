"""Terminal output: one panel per distinct crash, built from rich Text so log text is never markup."""

from __future__ import annotations

from typing import IO, Any

from ..diagnose import short_path
from ..pipeline import ScanResult
from ..records import Diagnosis, Frame

MAX_CHAIN_SHOWN = 12
MAX_MESSAGE = 240
MAX_NEXT_SHOWN = 8


def _frame(f: Frame, root: str | None = None) -> str:
    return f"{short_path(f.file, root)}:{f.line} in {f.function}"


def _chain_text(chain: tuple[Frame, ...]) -> list[str]:
    """The traced chain as a person reads it: the frames they can change, then the call that failed.

    Standard-library and torch frames in between are counted, not listed; a very long chain keeps its
    first frames (the compiled region) and the frames nearest the failure."""
    from ..culprit import is_changeable, source_root

    root = source_root(chain)
    if len(chain) <= MAX_CHAIN_SHOWN:
        return [_frame(f, root) for f in chain]
    keep = [f for f in chain[:-1] if is_changeable(f)] + [chain[-1]]
    hidden_internal = len(chain) - len(keep)
    out: list[str] = []
    if len(keep) > MAX_CHAIN_SHOWN:
        head, tail = keep[:2], keep[-(MAX_CHAIN_SHOWN - 2):]
        out = [_frame(f, root) for f in head] + [f"… {len(keep) - len(head) - len(tail)} more frames …"]
        out += [_frame(f, root) for f in tail]
    else:
        out = [_frame(f, root) for f in keep]
    if hidden_internal:
        out[-1] += f"   ({hidden_internal} standard-library/torch frames not shown)"
    return out


def _via(d: Diagnosis) -> str | None:
    """The call as written at the culprit, and the statement below it that dynamo rejected."""
    if d.culprit is None:
        return None
    idx = next((i for i, f in enumerate(d.chain) if f == d.culprit), None)
    parts = []
    if d.culprit.source:
        parts.append(d.culprit.source)
    if idx is not None and idx + 1 < len(d.chain):
        inner = d.chain[-1]
        if inner.source and inner.source not in parts:
            parts.append(inner.source)
    return "  →  ".join(parts) if parts else None


def _context_line(d: Diagnosis) -> str:
    c = d.context
    bits = []
    if c.mode:
        bits.append(c.mode)
    elif c.server:
        bits.append(c.server)
    else:
        bits.append("plain torch.compile")
    if c.fullgraph is True:
        bits.append("fullgraph=True: the graph cannot break")
    elif c.fullgraph is False:
        bits.append("graph breaks allowed")
    else:
        bits.append("fullgraph unknown")
    if c.versions:
        bits.append(", ".join(f"{k} {v}" for k, v in c.versions))
    return " · ".join(bits)


def _where(d: Diagnosis) -> str:
    first = d.occurrences[0]
    s = f"{first.source}:{first.line}"
    ranks = d.ranks
    if ranks:
        s += f"  (ranks: {', '.join(ranks)})" if len(ranks) <= 8 else f"  ({len(ranks)} ranks: {', '.join(ranks[:8])}, …)"
    if len(d.occurrences) > 1:
        s += f"  · seen {len(d.occurrences)} times"
    return s


def build_panel(d: Diagnosis, n: int) -> Any:
    from rich.console import Group
    from rich.panel import Panel
    from rich.table import Table
    from rich.text import Text

    grid = Table.grid(padding=(0, 1))
    grid.add_column(style="bold", no_wrap=True, min_width=8)
    grid.add_column(overflow="fold")

    def row(label: str, value: str, style: str = "") -> None:
        grid.add_row(label, Text(value, style=style))

    if d.exception:
        msg = d.exception[1] if len(d.exception[1]) <= MAX_MESSAGE else d.exception[1][:MAX_MESSAGE] + " …"
        label = "Error" if d.fatal else "Reason"
        row(label, f"{d.exception[0]}: {msg}" if d.exception[0] else msg, "red" if d.fatal else "yellow")
    if d.culprit:
        from ..culprit import source_root

        row("Culprit", _frame(d.culprit, source_root(d.chain)), "bold yellow")
        if d.culprit.source:
            row("", d.culprit.source, "dim")
    if d.callee:
        row("Callee", d.callee, "magenta")
    via = _via(d)
    if via:
        row("Call", via)
    if d.chain:
        lines = _chain_text(d.chain)
        row("Chain", lines[0])
        for ln in lines[1:]:
            row("", "→ " + ln, "dim")
    row("Context", _context_line(d))
    row("Log", _where(d))
    if d.near_match is not None:
        row("Match", f"near match (score {d.near_match:.0f}/100): wording differs from the catalog", "yellow")

    parts: list[Any] = [Text(d.summary), Text(""), grid]
    if d.fixes:
        parts.append(Text("\nFixes, best first:", style="bold green"))
        fixes = Table.grid(padding=(0, 1))
        fixes.add_column(no_wrap=True, style="bold green")
        fixes.add_column(overflow="fold")
        for f in d.fixes:
            body = Text()
            body.append(f"[{f.kind}] ", style="green")
            body.append(f.title, style="bold")
            if f.file:
                loc = short_path(f.file) + (f":{f.line}" if f.line else "")
                body.append(f"\nchange: {loc}", style="cyan")
            if f.detail:
                body.append("\n" + f.detail)
            fixes.add_row(f"{f.rank}.", body)
        parts.append(fixes)
    if d.next:
        parts.append(Text("\nNext in this chain (found statically in the installed library):", style="bold yellow"))
        nxt = Table.grid(padding=(0, 1))
        nxt.add_column(no_wrap=True)
        nxt.add_column(overflow="fold")
        for b in d.next[:MAX_NEXT_SHOWN]:
            nxt.add_row("-", Text(f"{short_path(str(b.get('file')))}:{b.get('line')} in {b.get('function')}: "
                                  f"{b.get('call')} ({b.get('category')})"))
        if len(d.next) > MAX_NEXT_SHOWN:
            nxt.add_row("", Text(f"… {len(d.next) - MAX_NEXT_SHOWN} more (see `crashlens audit`)", style="dim"))
        parts.append(nxt)
    for w in d.warnings:
        parts.append(Text("\n! " + w, style="yellow"))
    sev = "fatal" if d.fatal else "graph break (non-fatal)"
    title = Text(f" {n}. {d.title} ", style="bold red" if d.fatal else "bold yellow")
    sub = Text(f" {sev} · {d.signature or d.family} · confidence {d.confidence:.2f} · id {d.id} ")
    return Panel(Group(*parts), title=title, subtitle=sub, title_align="left", subtitle_align="right",
                 border_style="red" if d.fatal else "yellow")


def make_console(file: IO[str], **kwargs: Any) -> Any:
    """A rich Console that never interprets log text and reports a closed pipe as BrokenPipeError.

    rich's own reaction to a closed pipe is to point *sys.stdout* at /dev/null and exit(1), even when
    the console writes elsewhere: that would silence `--follow`'s pass-through and hide the exit code."""
    from rich.console import Console

    class _Console(Console):
        def on_broken_pipe(self) -> None:
            self.quiet = True
            raise BrokenPipeError

    return _Console(file=file, highlight=False, markup=False, emoji=False, soft_wrap=False, **kwargs)


def render(result: ScanResult, file: IO[str], color: bool | None = None, width: int | None = None) -> None:
    if not result.diagnoses:
        # Plain text, no styling: not worth rich's import time (a third of a small scan's).
        file.write(f"no crashes found in {result.total_lines} lines\n")
        return
    from rich.text import Text

    console = make_console(file, no_color=(color is False) or None, force_terminal=color if color else None,
                           width=width)
    fatal = sum(1 for d in result.diagnoses if d.fatal)
    console.print(Text(
        f"crashlens: {len(result.diagnoses)} distinct crash(es) ({fatal} fatal) in {result.total_lines} lines",
        style="bold"))
    for n, d in enumerate(result.diagnoses, 1):
        console.print(build_panel(d, n))
