"""`crashlens watch FILE...` and `cmd | crashlens --follow`: the pipeline fed from live sources, one report per crash."""

from __future__ import annotations

import os
import shlex
import stat
import subprocess
import sys
import threading
import time
from collections.abc import Iterable
from typing import IO, Any

import click

from ..catalog import get_catalog
from ..diagnose import merge
from ..follow import Ended, Idle, LineBuffer, NewFile, follow, stream_chunks
from ..pipeline import ContextSplit, SourceSession, in_log_order
from ..read import compression_of, decode_line
from ..records import Diagnosis
from ..rounds import LiveRounds, rounds_of
from . import _silence_stdout
from .app import complete_path
from .scan import next_blockers_hook
from .stops import reader_gone, stop_on_signals

# A record that reached its natural end (the dynamo trailer, or a plain traceback's exception line) is
# reported once its stream has taken no line for one fast poll (follow.MIN_INTERVAL): a crashing process
# writes its whole traceback at once, so anything that still belongs to it arrives within that time.
SETTLE = 0.015
STATUS_EVERY = 0.25  # seconds between redraws of the live status line
DEFAULT_QUIET = 0.5  # seconds a rank must be quiet before its cut-off traceback is reported
MAX_HOLD = 10.0  # seconds of quiet a finished crash waits at most for other ranks' open records


# -- when is a crash complete? -------------------------------------------------------------------------
def _stream_progress(session: SourceSession, key: str) -> tuple[Any, bool]:
    """(a token that changes whenever the stream takes a line, whether its record reached its natural end)."""
    status = session.extractor.stream_status(key)
    if status is None:
        return session.lines, False
    start, end, at_end = status
    return (start, end), at_end


def _close_complete(session: SourceSession, key: str) -> list[Diagnosis]:
    """End a record that reached its natural end as complete, as RecordExtractor.finish() would."""
    return session.flush_stream(key, complete=True)


class _Flusher:
    """Ends records whose rank stream went quiet: SETTLE after a natural end, the quiet period otherwise.

    Quiet time is what the sources report as Idle, so a backlog being worked through never counts."""

    def __init__(self, quiet_period: float) -> None:
        self.quiet_period = quiet_period
        self._quiet: dict[tuple[str, str], tuple[Any, float]] = {}  # (source, rank) -> (progress, quiet s)

    def tick(self, sessions: Iterable[SourceSession], idle: Idle) -> list[Diagnosis]:
        out: list[Diagnosis] = []
        live: set[tuple[str, str]] = set()
        for session in sessions:
            for key in session.extractor.active_streams():
                slot = (session.name, key)
                token, at_end = _stream_progress(session, key)
                prev = self._quiet.get(slot)
                if prev is None or prev[0] != token:
                    self._quiet[slot] = (token, 0.0)
                    live.add(slot)
                    continue
                quiet = prev[1] + idle.seconds
                if at_end and quiet >= SETTLE:
                    out.extend(_close_complete(session, key))
                    continue
                if quiet >= self.quiet_period:
                    out.extend(session.flush_stream(key))  # cut off: the record is marked incomplete
                    continue
                self._quiet[slot] = (token, quiet)
                live.add(slot)
        for slot in [s for s in self._quiet if s not in live]:
            del self._quiet[slot]
        return out


# -- --exec ----------------------------------------------------------------------------------------------
class _Exec:
    """Runs the user's command once per new crash with the diagnosis JSON on stdin; never blocks watching."""

    def __init__(self, cmd: str) -> None:
        try:
            self.argv = shlex.split(cmd)
        except ValueError as e:
            raise click.UsageError(f"--exec: cannot parse command ({e})") from None
        if not self.argv:
            raise click.UsageError("--exec: empty command")
        self._threads: list[threading.Thread] = []
        self._problems: list[str] = []
        self._reported = False
        self._lock = threading.Lock()

    def run(self, payload: str) -> None:
        t = threading.Thread(target=self._run, args=(payload.encode("utf-8"),), daemon=True)
        t.start()
        self._threads = [x for x in self._threads if x.is_alive()] + [t]

    def _run(self, payload: bytes) -> None:
        # The command's own output goes to our stderr, never into the stream of diagnoses on stdout.
        try:
            err_fd: Any = sys.stderr.fileno()
        except (AttributeError, OSError, ValueError):
            err_fd = subprocess.DEVNULL
        try:
            rc = subprocess.run(self.argv, input=payload, stdout=err_fd, check=False).returncode
        except OSError as e:
            problem = f"cannot run {self.argv[0]!r}: {e.strerror or e}"
        else:
            if rc == 0:
                return
            problem = f"{shlex.join(self.argv)!r} exited with status {rc}"
        with self._lock:
            self._problems.append(problem)

    def drain(self) -> str | None:
        """The first failure, once; later failures are not repeated."""
        with self._lock:
            problems, self._problems = self._problems, []
        if not problems or self._reported:
            return None
        self._reported = True
        return f"--exec: {problems[0]} (watching goes on; further failures are not reported)"

    def wait(self, timeout: float = 10.0) -> None:
        deadline = time.monotonic() + timeout
        for t in self._threads:
            t.join(max(0.0, deadline - time.monotonic()))


# -- output ----------------------------------------------------------------------------------------------
def _plain_only(color: bool | None) -> bool:
    return color is False or "NO_COLOR" in os.environ


class _Reporter:
    """Prints each distinct crash once; later copies (other ranks, other files) only update the counts."""

    def __init__(self, fmt: str, out: IO[str], color: bool | None, exec_cmd: str | None,
                 status: bool, files: list[str] | None = None, every_round: bool = False) -> None:
        self.fmt = fmt
        self.every_round = every_round  # say the round of round 1's crashes too (crashlens run)
        self.out = out
        self.closed = False  # the reader of `out` left (a closed pipe): nothing more can be reported
        self.exec = _Exec(exec_cmd) if exec_cmd else None
        self.seen: dict[str, Diagnosis] = {}
        self.rounds = LiveRounds()
        self.contexts = ContextSplit()  # a crash under two servers' contexts is reported for each
        self.order: list[str] = []
        self.files = files or []
        self.sessions: list[SourceSession] = []
        self._pending: list[Diagnosis] = []  # finished, waiting for the other ranks' records to close
        self._pending_quiet = 0.0
        self._console: Any = None
        self._live: Any = None
        self._last_status = 0.0
        self._status_shown = ""
        if fmt == "terminal":
            from ..render.terminal import make_console

            plain = _plain_only(color)
            # color_system=None: no escape codes at all (NO_COLOR alone would keep bold and dim).
            extra: dict[str, Any] = {"color_system": None} if plain else {}
            self._console = make_console(out, force_terminal=True if color else None, **extra)
            if status and not plain and self._console.is_terminal:
                from rich.live import Live

                self._live = Live(self._status_text(), console=self._console, auto_refresh=False,
                                  transient=True, redirect_stdout=False, redirect_stderr=False)
                self._live.start()

    @property
    def fatal(self) -> bool:
        return any(d.fatal for d in self.seen.values())

    def add(self, diags: Iterable[Diagnosis]) -> None:
        """Crashes that completed; printed once no other record is open (see release)."""
        self._pending.extend(diags)
        if self._pending and not self._records_open():
            self.release()

    def idle(self, seconds: float) -> None:
        if not self._pending:
            return
        self._pending_quiet += seconds
        if self._pending_quiet >= MAX_HOLD or not self._records_open():
            self.release()

    def _records_open(self) -> bool:
        return any(s.extractor.active_streams() for s in self.sessions)

    def release(self) -> None:
        """Print the crashes that are new. Ranks that crash together print their tracebacks interleaved,
        and a rank's copy may finish before the complete one it is a fragment of; so crashes wait until
        no record is open and then go through merge() together, which
        decides "the same crash" exactly as scan does. A record left open that long is cut off after the
        quiet period anyway; MAX_HOLD only guards against one that keeps taking lines."""
        batch, self._pending, self._pending_quiet = self._pending, [], 0.0
        if not batch:
            return
        self.contexts.learn(batch)
        merged = merge([*self.seen.values(), *self.contexts.split(batch)])
        # A crash already printed that merge() now folds into a new one stays printed and counted.
        # Within a round, another copy (a rank, a file) only changes the counts; a crash that comes back
        # in a later round (after a restart) is reported again (rounds.py).
        for m in merged:
            if m.id not in self.seen:
                self.order.append(m.id)
            self.seen[m.id] = m
            for source, round_, again, gone in self.rounds.news(m):
                self._print(m, self.order.index(m.id) + 1, source, round_, again, gone)
                if self.exec is not None:
                    from ..render.json import render_line

                    self.exec.run(render_line(m, round_, again, gone) + "\n")

    def _print(self, d: Diagnosis, n: int, source: str, round_: int, again: bool, gone: tuple[str, ...]) -> None:
        if self.closed:
            return
        try:
            self._write(d, n, source, round_, again, gone)
        except OSError as e:
            self._reader_left(e)

    def _reader_left(self, e: OSError) -> None:
        if not reader_gone(e):
            raise e
        self.closed = True
        if self.out is sys.stdout:
            _silence_stdout()

    def _write(self, d: Diagnosis, n: int, source: str, round_: int, again: bool, gone: tuple[str, ...]) -> None:
        if self.fmt == "jsonl":
            from ..render.json import render_line

            self.out.write(render_line(d, round_, again, gone) + "\n")
            self.out.flush()
        elif self.fmt == "terminal":
            from rich.text import Text

            from ..render.terminal import panel

            if round_ > 1 or self.every_round:  # a restart: which round, and what the last one had that this has not
                number = {i: k for k, i in enumerate(self.order, 1)}
                news = [f"#{number[i]} gone" for i in gone if i in number]
                news.append(f"#{n} again: the last change did not help" if again else f"#{n} new")
                where = "" if self.every_round else f" of {source}"  # run: one source, the command
                self._console.print(Text(f"round {round_}{where}: " + " · ".join(news), style="bold"))
            if not again:  # the panel of a crash that comes back was printed in its first round
                # The panel's own colours, handed to rich (which drops them where colour is off).
                self._console.print(Text.from_ansi(panel(d, n, self._console.width, True).rstrip("\n")))
            self.out.flush()
            self._refresh(force=True)

    def notice(self, source: str, message: str) -> None:
        """tail -F style news about a followed file (truncated, replaced, appeared) on stderr."""
        line = f"crashlens: {source}: {message}"
        if self._live is not None:
            from rich.text import Text

            self._console.print(Text(line, style="dim"))
            return
        sys.stderr.write(line + "\n")
        sys.stderr.flush()

    def tick(self) -> None:
        if self.exec is not None:
            problem = self.exec.drain()
            if problem:
                self._error(problem)
        self._refresh()

    def _error(self, message: str) -> None:
        if self._live is not None:
            from rich.text import Text

            self._console.print(Text(f"crashlens: {message}", style="bold red"))
            return
        sys.stderr.write(f"crashlens: {message}\n")
        sys.stderr.flush()

    def _status_text(self) -> Any:
        from rich.text import Text

        from ..render.text import findings

        lines = sum(s.lines for s in self.sessions)
        what = f"{len(self.files)} files" if len(self.files) != 1 else self.files[0]
        t = Text(f"watching {what} · {lines} lines · {findings(list(self.seen.values()))}", style="dim")
        for n, i in enumerate(self.order[:6], 1):
            d = self.seen[i]
            ranks = len(d.ranks)
            t.append(f" · #{n} " + (f"{ranks} rank(s)" if ranks else f"seen {len(d.occurrences)}x"), style="dim")
        t.append("  (Ctrl-C to stop)", style="dim")
        return t

    def _refresh(self, force: bool = False) -> None:
        if self._live is None:
            return
        now = time.monotonic()
        if force or now - self._last_status >= STATUS_EVERY:
            self._last_status = now
            text = self._status_text()
            if force or text.plain != self._status_shown:  # an idle watcher writes nothing
                self._status_shown = text.plain
                self._live.update(text, refresh=True)

    def close(self) -> None:
        self.release()
        if self._live is not None:
            self._live.stop()
            self._live = None
        if self.fmt == "json" and not self.closed:
            from ..pipeline import ScanResult
            from ..render.json import render

            ordered = in_log_order(merge(self.seen[i] for i in self.order), [s.name for s in self.sessions])
            sources = tuple((s.name, s.lines) for s in self.sessions)
            try:
                self.out.write(render(ScanResult(sources, ordered, rounds_of(ordered))))
                self.out.flush()
            except OSError as e:
                self._reader_left(e)
        if self.exec is not None:
            self.exec.wait()
            problem = self.exec.drain()
            if problem:
                self._error(problem)


# -- the two ways in -------------------------------------------------------------------------------------
def _watch_files(files: list[str], fmt: str, signatures: tuple[str, ...], audit: bool, color: bool | None,
                 exec_cmd: str | None, quiet_period: float, from_start: bool) -> int:
    cat = get_catalog(list(signatures))
    cat.warm()
    hook = next_blockers_hook(audit)
    sessions = {name: SourceSession(name, cat, hook) for name in files}
    reporter = _Reporter(fmt, sys.stdout, color, exec_cmd, status=True, files=files)
    reporter.sessions = list(sessions.values())
    flusher = _Flusher(quiet_period)
    with stop_on_signals():
        try:
            for item in follow(files, from_start=from_start, quiet_period=quiet_period, notice=reporter.notice,
                               events=True):
                if isinstance(item, Idle):
                    reporter.add(flusher.tick(sessions.values(), item))
                    reporter.idle(item.seconds)
                    reporter.tick()
                    if reporter.closed:
                        break  # nobody reads the reports any more
                    continue
                if isinstance(item, Ended):  # a FIFO's writer closed it: what is still open is complete
                    reporter.add(sessions[item.name].finish())
                    continue
                if isinstance(item, NewFile):  # rotated or truncated: after a crash, the next round
                    sessions[item.name].new_file()
                    continue
                name, text = item
                reporter.add(sessions[name].feed(text))
        finally:
            reporter.close()
    # Following files ends with a signal (cli/stops.py), when the reader of the reports left, or when
    # every file was a FIFO (or device) and has ended.
    return 1 if reporter.fatal else 0


def _follow_stream(fmt: str, signatures: tuple[str, ...], audit: bool, color: bool | None,
                   exec_cmd: str | None, quiet_period: float) -> int:
    cat = get_catalog(list(signatures))
    cat.warm()
    session = SourceSession("<stdin>", cat, next_blockers_hook(audit))
    # Diagnoses go to stderr: stdout carries the input through, byte for byte.
    reporter = _Reporter(fmt, sys.stderr, color, exec_cmd, status=False)
    reporter.sessions = [session]
    flusher = _Flusher(quiet_period)
    with stop_on_signals():
        try:
            _pump(session, reporter, flusher, sys.stdout.buffer, quiet_period)
        finally:
            reporter.close()
    return 1 if reporter.fatal else 0


def _pump(session: SourceSession, reporter: Any, flusher: _Flusher, passthrough: IO[bytes] | None,
          quiet_period: float, source: IO[bytes] | None = None) -> None:
    """A stream (stdin, or `crashlens run`'s command) to its end: through to `passthrough` unchanged, and
    into the session line by line. A reader of the passthrough that leaves early changes nothing else: the
    input is still read and diagnosed whole."""
    buf = LineBuffer()
    partial_quiet = 0.0  # how long a partial last line has waited for its newline
    just_read = False
    for chunk in stream_chunks(source if source is not None else sys.stdin.buffer):
        if isinstance(chunk, Idle):
            # The wait that ended with data does not count for a partial line that data brought.
            partial_quiet = 0.0 if just_read else partial_quiet + chunk.seconds
            just_read = False
            if buf.pending and partial_quiet >= quiet_period:
                raw = buf.flush()
                if raw is not None:
                    reporter.add(session.feed(decode_line(raw)))
            reporter.add(flusher.tick([session], chunk))
            reporter.idle(chunk.seconds)
            reporter.tick()
            continue
        just_read = True
        if passthrough is not None:
            try:
                passthrough.write(chunk)
                passthrough.flush()
            except OSError as e:
                if not reader_gone(e):
                    raise
                passthrough = None
                _silence_stdout()
        for raw in buf.feed(chunk):
            reporter.add(session.feed(decode_line(raw)))
    raw = buf.flush()
    if raw is not None:
        reporter.add(session.feed(decode_line(raw)))
    reporter.add(session.finish())


def _head(path: str) -> bytes:
    """The first bytes of a regular file (its compression's magic), nothing for anything else."""
    try:
        if not stat.S_ISREG(os.stat(path).st_mode):
            return b""
        with open(path, "rb") as fh:
            return fh.read(16)
    except OSError:
        return b""


def follow_stdin(fmt: str, signatures: tuple[str, ...], audit: bool, color: bool | None) -> int:
    """`cmd 2>&1 | crashlens --follow`: input through to stdout, diagnoses to stderr as crashes complete."""
    return _follow_stream(fmt, tuple(signatures), audit, color, None, DEFAULT_QUIET)


@click.command("watch")
@click.argument("files", nargs=-1, required=True, type=str, shell_complete=complete_path)
@click.option("--from-start", is_flag=True, help="Read each file whole first (default: start at its end).")
@click.option("--format", "fmt", type=click.Choice(["terminal", "json", "jsonl"]), default="terminal",
              show_default=True, help="jsonl: one diagnosis per line as it completes; json: one document at the end.")
@click.option("--exec", "exec_cmd", metavar="CMD",
              help="Run CMD for each new crash, with its crashlens/v1 diagnosis JSON on stdin (no shell).")
@click.option("--quiet-period", type=click.FloatRange(min=0.01), default=DEFAULT_QUIET, show_default=True,
              metavar="SECONDS", help="A cut-off traceback is reported after its rank was quiet this long.")
@click.option("--signatures", "signatures", multiple=True, metavar="DIR",
              help="Extra signature directory (overrides built-ins by id).")
@click.option("--audit/--no-audit", default=True, show_default=True,
              help="Add the next blockers found statically in the installed culprit library.")
@click.option("--color/--no-color", default=None, help="Force colour on or off (default: auto, NO_COLOR respected).")
def watch(files: tuple[str, ...], from_start: bool, fmt: str, exec_cmd: str | None, quiet_period: float,
          signatures: tuple[str, ...], audit: bool, color: bool | None) -> int:
    """Follow log FILES like `tail -F` and diagnose crashes as they happen (`-` streams stdin through).

    \b
    crashlens watch server.log                 report crashes as they complete (Ctrl-C to stop)
    crashlens watch rank*.log --format jsonl   one JSON diagnosis per line, for other programs
    cmd 2>&1 | crashlens watch -               pass the log through; diagnoses on stderr; exit 1 if fatal
    """
    names = list(dict.fromkeys(files))
    for name in names:
        if name != "-" and compression_of(name, _head(name)) is not None:
            raise click.UsageError(f"{name}: compressed; watch follows a plain log as it grows (read it whole with "
                                   f"`crashlens {name}`)")
    if "-" in names:
        if len(names) > 1:
            raise click.UsageError("`-` (stdin) cannot be watched together with files")
        return _follow_stream(fmt, signatures, audit, color, exec_cmd, quiet_period)
    return _watch_files(names, fmt, signatures, audit, color, exec_cmd, quiet_period, from_start)
