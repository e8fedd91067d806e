"""The crashlens command line: `main` turns every outcome into a documented exit code. The commands
are click's (app.py); the commonest command lines are read without click (fastpath.py); both take
the command table below. No logic lives here."""

from __future__ import annotations

import errno
import os
import sys

from .. import __version__

TYPE_CHECKING = False  # typing.TYPE_CHECKING without importing typing (~4 ms of start-up)
if TYPE_CHECKING:
    from typing import Any

# Exit codes (documented in the README).
EXIT_OK = 0
EXIT_FATAL = 1
EXIT_USAGE = 2
EXIT_INTERNAL = 3  # a bug in crashlens: one line asking for a report (CRASHLENS_DEBUG=1: the traceback)
EXIT_INTERRUPTED = 130  # Ctrl-C; SIGTERM 143, SIGHUP 129 (128 + the signal's number; cli/stops.py)

# Subcommands are imported when used: each pulls in its own stages (audit, CI renderers, the file
# follower), and a scan should not pay for them at start-up.
SUBCOMMANDS: dict[str, tuple[str, str, str]] = {
    "scan": ("app", "scan", "Scan log FILES (or stdin) for torch.compile crashes."),
    "watch": ("watch", "watch", "Follow live log files (like tail -F) and diagnose crashes as they complete."),
    "ci": ("ci", "ci", "Annotate a CI run from its log artifacts (GitHub, SARIF, JUnit, GitLab, Markdown)."),
    "audit": ("audit", "audit", "Find every call dynamo will reject in a library's call chain, statically."),
    "signatures": ("signatures", "signatures", "Show and check the signature catalog."),
    "explain": ("signatures", "explain", "Explain one signature: meaning, cause, fixes by context."),
    "mine": ("mine", "mine", "Group every crash of many logs by diagnosis id (local or Ray engine)."),
    "schema": ("schema", "schema", "Print the JSON Schema of the crashlens/v1 output."),
    "fix": ("fix", "fix", "Print (or --apply, --revert) a patch for the top mechanical fix of a crash in LOG."),
    "run": ("fix", "run", "Run CMD, diagnose its output as it comes; with --fix, fix and re-run until it compiles."),
}
# Words that the group answers itself rather than reading them as a log file's name.
GROUP_WORDS = ("--help", "-h", "--version")
# Set by a shell's completion script (README "Install"); click answers it, never the fast path.
COMPLETE_VAR = "_CRASHLENS_COMPLETE"
# The scan command's output formats.
FORMATS = ("terminal", "json", "jsonl", "html")


def unknown_command(word: str) -> str | None:
    """`crashlens help`, `crashlens wach x.log`: a first word that is neither a subcommand nor an existing
    file, and looks like a command (no path separator, no dot), is a mistyped command, not a missing log.
    The message names the nearest command; None when the word may well be a file's name."""
    if word in SUBCOMMANDS or word.startswith("-") or not word.replace("-", "").replace("_", "").isalnum():
        return None
    if os.path.lexists(word):
        return None
    import difflib

    if word in ("help", "h"):
        hint = "`crashlens --help`"
    else:
        near = difflib.get_close_matches(word, list(SUBCOMMANDS), n=1, cutoff=0.6)
        hint = f"`crashlens {near[0]}`" if near else f"one of {', '.join(SUBCOMMANDS)}"
    return f"{word}: no such command (did you mean {hint}?), and no file of that name to scan"


def main(argv: list[str] | None = None) -> Any:
    """Console-script entry: every error becomes one line on stderr and a documented exit code, never a
    traceback (CRASHLENS_DEBUG=1 shows the traceback of an internal error)."""
    from ..errors import UserError

    stdout_was_devnull = _stdout_is_devnull()
    try:
        rc = _run(sys.argv[1:] if argv is None else list(argv))
    except _click("Exit") as e:  # --help, --version, ctx.exit(n)
        return _exit(e.exit_code)
    except SystemExit:
        # rich answers a closed stdout by pointing it at /dev/null and exiting 1: the same quiet stop.
        if _stdout_is_devnull() and not stdout_was_devnull:
            return _exit(EXIT_OK)
        raise
    except (_click("Abort"), KeyboardInterrupt) as e:
        what = getattr(e, "name", "SIGINT")  # cli/stops.Stopped: SIGTERM and SIGHUP stop as Ctrl-C does
        return _fail("interrupted" if what == "SIGINT" else f"stopped by {what}",
                     getattr(e, "exit_code", EXIT_INTERRUPTED))
    except _click("UsageError") as e:
        if type(e).__name__ == "NoArgsIsHelpError" and e.ctx is not None:  # `crashlens signatures`
            return _help(e.ctx.get_help(), EXIT_USAGE)
        msg = e.format_message().splitlines()[0] if e.format_message() else "usage error"
        if "(see " not in msg:
            msg += f" (see `{e.ctx.command_path if e.ctx else 'crashlens'} --help`)"
        return _fail(msg, EXIT_USAGE)
    except _click("ClickException") as e:
        return _fail(e.format_message(), e.exit_code if e.exit_code not in (0, 1) else EXIT_USAGE)
    except UserError as e:
        return _fail(str(e), EXIT_USAGE)
    except BrokenPipeError:
        # `crashlens big.log | head`: the reader left; that is not an error.
        _silence_stdout()
        return _exit(EXIT_OK)
    except OSError as e:
        if e.errno == errno.EPIPE:
            _silence_stdout()
            return _exit(EXIT_OK)
        where = f"{e.filename}: " if e.filename else ""
        return _fail(f"{where}{e.strerror or e}", EXIT_USAGE)
    except RecursionError:
        return _internal(RecursionError("input nested too deeply"))
    except MemoryError:
        return _fail("out of memory (internal error, please report)", EXIT_INTERNAL)
    except Exception as e:  # noqa: BLE001 - the last line of defence: one line, never a traceback
        return _internal(e)
    return _exit(rc if isinstance(rc, int) and not isinstance(rc, bool) else EXIT_OK)


def _run(args: list[str]) -> Any:
    """Parse and run one command line; its return value is the exit status."""
    if COMPLETE_VAR in os.environ:
        from .app import complete

        return complete(os.environ[COMPLETE_VAR])
    from .fastpath import VERSION, parse

    plan = parse(args)
    if plan == VERSION:
        sys.stdout.write(f"crashlens, version {__version__}\n")  # what click's version option writes
        return EXIT_OK
    if isinstance(plan, dict):
        mistyped = unknown_command(args[0]) if args and args[0] != "scan" else None
        if mistyped:
            from ..errors import UserError

            raise UserError(mistyped)
        from .scan import scan_and_report

        global _fast_scan
        _fast_scan = True
        return scan_and_report(plan["files"], plan["fmt"], plan["signatures"], plan["audit"], plan["color"],
                               plan["jobs"])
    from .app import cli

    # make_context/invoke rather than cli.main: click's own handler turns a closed stdout into exit 1
    # and prints a blank line on Ctrl-C; every outcome is decided in main instead.
    with cli.make_context("crashlens", args) as ctx:
        return cli.invoke(ctx)


class _NeverRaised(Exception):
    pass


def _click(name: str) -> Any:
    """click's exception class `name` for an except clause, once click is loaded: until then nothing
    can have raised one (the fast path does not import click)."""
    click = sys.modules.get("click")
    return getattr(click.exceptions, name) if click is not None else _NeverRaised


def _one_line(msg: str) -> str:
    """A message can carry a file name or log text: keep it one printable line, and short."""
    from ..frame import strip_controls

    text = strip_controls(" ".join(str(msg).split()))
    return text if len(text) <= 500 else text[:500] + " …"


def _fail(msg: str, code: int) -> Any:
    try:
        sys.stderr.write(f"crashlens: {_one_line(msg)}\n")
        sys.stderr.flush()
    except (OSError, ValueError):
        pass
    return _exit(code)


def _help(text: str, code: int) -> Any:
    try:
        sys.stderr.write(text + "\n")
    except (OSError, ValueError):
        pass
    return _exit(code)


def _internal(e: BaseException) -> Any:
    if os.environ.get("CRASHLENS_DEBUG") == "1":
        import traceback

        traceback.print_exception(type(e), e, e.__traceback__)
        return _exit(EXIT_INTERNAL)
    detail = f"{type(e).__name__}: {e}" if str(e) else type(e).__name__
    return _fail(f"internal error, please report: {detail} (CRASHLENS_DEBUG=1 shows the traceback)",
                 EXIT_INTERNAL)


def _stdout_is_devnull() -> bool:
    try:
        st, null = os.fstat(sys.stdout.fileno()), os.stat(os.devnull)
    except (OSError, ValueError, AttributeError):
        return False
    return (st.st_dev, st.st_ino) == (null.st_dev, null.st_ino)


def _silence_stdout() -> None:
    """Point stdout at /dev/null so the interpreter's final flush cannot fail on the closed pipe."""
    try:
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, sys.stdout.fileno())
        os.close(devnull)
    except (OSError, ValueError):
        pass


# A scan read by the fast path, run as the console script, ends without the interpreter's teardown (freeing
# every module, the catalog and its compiled patterns: 8-14 ms of CPU, a seventh of a crash-free scan): its
# output is flushed and atexit's handlers (the caches kept in ~/.cache/crashlens) have run, and it holds no
# file open for writing. Never for a caller of main(), nor for the commands click runs.
_console = False
_fast_scan = False


def console() -> Any:
    """The console script's entry point (pyproject.toml): main(), ended quickly where that is safe."""
    global _console
    _console = True
    return main()


def _exit(code: int) -> Any:
    try:
        sys.stdout.flush()
    except BrokenPipeError:
        _silence_stdout()
    except (OSError, ValueError):
        pass
    if _console and _fast_scan:
        import atexit

        run_exitfuncs = getattr(atexit, "_run_exitfuncs", None)
        if run_exitfuncs is not None:
            run_exitfuncs()
            for stream in (sys.stdout, sys.stderr):
                try:
                    stream.flush()
                except (OSError, ValueError):
                    pass
            os._exit(code)
    sys.exit(code)
