"""Terminal output: one box-drawn panel per distinct crash. Log text is never interpreted (no markup)."""

from __future__ import annotations

from ..diagnose import short_path
from ..pipeline import ScanResult
from ..records import Diagnosis, Frame

TYPE_CHECKING = False  # typing.TYPE_CHECKING without importing typing (~4 ms of start-up)
if TYPE_CHECKING:
    from typing import IO, Any

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
    elif d.family == "dynamo":
        bits.append("plain torch.compile")
    if d.family != "dynamo":
        pass  # fullgraph is torch.compile's: it says nothing about an import error, an OOM or NCCL
    elif c.fullgraph is True:
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
    rounds = sorted({o.round for o in d.occurrences})
    if rounds != [1]:
        s += f"  · round{'s' if len(rounds) > 1 else ''} {', '.join(map(str, rounds))}"
    return s


def _rounds_block(result: ScanResult, width: int, color: bool) -> str:
    """The launches of a log appended to over several (rounds.py), in order: each round's crashes by
    their panel number, which came back, which were gone."""
    number = {d.id: n for n, d in enumerate(result.diagnoses, 1)}
    title = {d.id: d.title for d in result.diagnoses}
    lines = [_paint("rounds (restarts of the same log):", "bold", color)]
    for r in result.rounds:
        bits = [f"#{number[i]} gone" for i in r.gone if i in number]
        bits += [f"#{number[i]} again" if i in r.again else f"#{number[i]} {title[i]}" for i in r.crashes]
        line = f"  {r.source} round {r.number}, line {r.first_line}: " + " · ".join(bits)
        if r.again and not set(r.crashes) - set(r.again):
            line += " (the last change did not help)"
        lines.append(_fit(line, width)[0] if _cells(line) > width else line)
    return "\n".join(lines) + "\n"


# A line of a panel's body: (text, style) pieces; a style is space-separated names from _SGR.
Piece = tuple[str, str]
_SGR = {"bold": "1", "dim": "2", "red": "31", "green": "32", "yellow": "33", "magenta": "35", "cyan": "36"}
_LABEL_WIDTH = 8


def _paint(text: str, style: str, color: bool) -> str:
    """The text in the style's ANSI colours, or as it is without colour (or style)."""
    if not color or not style or not text:
        return text
    return "\x1b[" + ";".join(_SGR[s] for s in style.split()) + "m" + text + "\x1b[0m"


def _cells(text: str) -> int:
    """Terminal columns the text takes (East Asian wide characters take two, combining marks none)."""
    if text.isascii():
        return len(text)
    import unicodedata

    return sum(0 if unicodedata.combining(c) else 2 if unicodedata.east_asian_width(c) in "WF" else 1
               for c in text)


def _fit(text: str, width: int) -> tuple[str, str]:
    """The longest head of `text` that fits in `width` columns (at least one character), and the rest."""
    if text.isascii():
        k = max(1, width)
        return text[:k], text[k:]
    used = 0
    for i, c in enumerate(text):
        used += _cells(c)
        if used > width and i:
            return text[:i], text[i:]
    return text, ""


def _wrap(pieces: list[Piece], width: int) -> list[list[Piece]]:
    """Pieces laid out in lines of at most `width` columns: broken at spaces where it can, a word
    longer than a line folded, each newline kept, spaces at a break dropped, leading ones kept."""
    import re

    lines: list[list[Piece]] = [[]]
    used = 0
    for text, style in pieces:
        for token in re.findall(r"\n| +|[^ \n]+", text):
            if token == "\n":
                lines.append([])
                used = 0
                continue
            w = _cells(token)
            if token[0] == " ":
                if used + w < width:
                    lines[-1].append((token, style))
                    used += w
                elif lines[-1]:
                    lines.append([])
                    used = 0
                continue
            if used + w > width and lines[-1]:
                lines.append([])
                used = 0
            while used + w > width:
                head, token = _fit(token, width - used)
                lines[-1].append((head, style))
                lines.append([])
                used, w = 0, _cells(token)
            lines[-1].append((token, style))
            used += w
    for line in lines:  # no trailing spaces (a break may leave them)
        while line and not line[-1][0].strip():
            line.pop()
    return lines


def _grid(rows: list[tuple[str, list[Piece]]], width: int, label_style: str = "bold",
          min_label: int = _LABEL_WIDTH) -> list[list[Piece]]:
    """Two columns: a label (never wrapped) and its value, wrapped under itself."""
    lw = max([min_label, *(_cells(label) for label, _ in rows)])
    out: list[list[Piece]] = []
    for label, value in rows:
        for i, line in enumerate(_wrap(value, max(10, width - lw - 1))):
            head = label if i == 0 else ""
            out.append([(head + " " * (lw - _cells(head) + 1), label_style if head else ""), *line])
    return out


BOX = "╭─╮│╰╯"
ASCII_BOX = "+-+|++"  # for an output encoding without the box-drawing characters


def panel(d: Diagnosis, n: int, width: int, color: bool, box: str = BOX) -> str:
    """One crash as a box-drawn panel of `width` columns, with ANSI colours when `color`. Plain string
    building: rich (a third of a small scan's start-up) is not imported for it. Log text reaches here
    stripped of control characters (frame.py), and nothing in it is interpreted."""
    from ..frame import strip_controls

    inner = max(40, width - 4)
    body: list[list[Piece]] = []

    def text(value: str, style: str = "") -> list[Piece]:
        return [(strip_controls(value), style)]

    rows: list[tuple[str, list[Piece]]] = []
    if d.exception:
        msg = d.exception[1] if len(d.exception[1]) <= MAX_MESSAGE else d.exception[1][:MAX_MESSAGE] + " …"
        label = "Error" if d.fatal else "Reason"
        rows.append((label, text(f"{d.exception[0]}: {msg}" if d.exception[0] else msg, "red" if d.fatal else "yellow")))
    if d.culprit:
        from ..culprit import source_root

        rows.append(("Culprit", text(_frame(d.culprit, source_root(d.chain)), "bold yellow")))
        if d.culprit.source:
            rows.append(("", text(d.culprit.source, "dim")))
    if d.callee:
        rows.append(("Callee", text(d.callee, "magenta")))
    via = _via(d)
    if via:
        rows.append(("Call", text(via)))
    if d.chain:
        lines = _chain_text(d.chain)
        rows.append(("Chain", text(lines[0])))
        rows += [("", text("→ " + ln, "dim")) for ln in lines[1:]]
    rows.append(("Context", text(_context_line(d))))
    rows.append(("Log", text(_where(d))))
    if d.near_match is not None:
        rows.append(("Match", text(f"near match (score {d.near_match:.0f}/100): wording differs from the catalog",
                                   "yellow")))
    body += _wrap(text(d.summary), inner)
    body.append([])
    body += _grid(rows, inner)
    if d.fixes:
        body += [[], [("Fixes, best first:", "bold green")]]
        fixes = []
        for f in d.fixes:
            pieces = [(f"[{f.kind}] ", "green"), *text(f.title, "bold")]
            if f.file:
                loc = short_path(f.file) + (f":{f.line}" if f.line else "")
                pieces += text(f"\nchange: {loc}", "cyan")
            if f.detail:
                pieces += text("\n" + f.detail)
            fixes.append((f"{f.rank}.", pieces))
        body += _grid(fixes, inner, "bold green", 0)
    if d.next:
        body += [[], [("Next in this chain (found statically in the installed library):", "bold yellow")]]
        nxt = [("-", text(f"{short_path(str(b.get('file')))}:{b.get('line')} in {b.get('function')}: "
                          f"{b.get('call')} ({b.get('category')})")) for b in d.next[:MAX_NEXT_SHOWN]]
        if len(d.next) > MAX_NEXT_SHOWN:
            nxt.append(("", text(f"… {len(d.next) - MAX_NEXT_SHOWN} more (see `crashlens audit`)", "dim")))
        body += _grid(nxt, inner, "", 0)
    for w in d.warnings:
        body += [[], *_wrap(text("! " + w, "yellow"), inner)]

    edge = "red" if d.fatal else "yellow"
    sev = "fatal" if d.fatal else "graph break (non-fatal)"
    title = strip_controls(f" {n}. {d.title} ")
    if _cells(title) > inner - 2:
        title = _fit(title, inner - 4)[0] + "… "
    sub = f" {sev} · {d.signature or d.family} · confidence {d.confidence:.2f} · id {d.id} "
    if _cells(sub) > inner - 2:
        sub = _fit(sub, inner - 4)[0] + "… "

    def paint(t: str, style: str) -> str:
        return _paint(t, style, color)

    tl, h, tr, v, bl, br = tuple(box)
    top = paint(f"{tl}{h} ", edge) + paint(title, f"bold {edge}") + paint(" " + h * (inner - 1 - _cells(title)) + tr, edge)
    bottom = paint(bl + h * (inner - 1 - _cells(sub)) + " ", edge) + sub + paint(f" {h}{br}", edge)
    out = [top]
    for line in body:
        used = sum(_cells(t) for t, _ in line)
        runs: list[list[str]] = []  # neighbouring pieces of one style painted as one run
        for t, st in line:
            if runs and runs[-1][1] == st:
                runs[-1][0] += t
            else:
                runs.append([t, st])
        content = "".join(paint(t, st) for t, st in runs)
        out.append(paint(v, edge) + " " + content + " " * (inner - used) + " " + paint(v, edge))
    out.append(bottom)
    return "\n".join(out) + "\n"


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


def terminal_width() -> int:
    """$COLUMNS, else the width of the terminal on stdout, else 80 (what shutil.get_terminal_size
    gives, without importing shutil)."""
    import os
    import sys

    try:
        columns = int(os.environ.get("COLUMNS", "0"))
    except ValueError:
        columns = 0
    if columns <= 0:
        try:
            columns = os.get_terminal_size(sys.__stdout__.fileno()).columns  # type: ignore[union-attr]
        except (AttributeError, ValueError, OSError):
            columns = 0
    return columns if columns > 0 else 80


def render(result: ScanResult, file: IO[str], color: bool | None = None, width: int | None = None) -> None:
    """The crashes as panels. Colour: `color`, else NO_COLOR / FORCE_COLOR / TERM=dumb, else whether
    `file` is a terminal. Width: `width`, else the terminal's (or $COLUMNS, else 80)."""
    if not result.diagnoses:
        file.write(f"crashlens: no crashes found in {result.total_lines} lines\n")
        return
    import os

    if color is None:
        if os.environ.get("NO_COLOR") or os.environ.get("TERM") == "dumb":
            color = False
        elif os.environ.get("FORCE_COLOR"):
            color = True
        else:
            isatty = getattr(file, "isatty", None)
            color = bool(isatty and isatty())
            if os.name == "nt" and not os.environ.get("WT_SESSION"):
                color = False  # the classic Windows console shows escape codes as text
    if width is None:
        width = terminal_width()
    encoding = getattr(file, "encoding", None) or "utf-8"
    try:
        (BOX + "→…·").encode(encoding)
        box, lossy = BOX, False
    except (UnicodeEncodeError, LookupError):  # e.g. a Windows pipe in cp1252
        box, lossy = ASCII_BOX, True
    from .text import findings

    head = f"crashlens: {findings(result.diagnoses)} in {result.total_lines} lines"
    file.write(_paint(head, "bold", color) + "\n")
    if result.rounds:
        file.write(_rounds_block(result, width, color))
    for n, d in enumerate(result.diagnoses, 1):
        text = panel(d, n, width, color, box)
        if lossy:  # what the encoding cannot show becomes "?" rather than an exception
            text = text.encode(encoding, "replace").decode(encoding)
        file.write(text)
