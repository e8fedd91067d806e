"""The crashlens command line: click commands that wire the pipeline stages. No logic lives here."""

from __future__ import annotations

import errno
import os
import sys
from typing import Any

import click

from .. import __version__

# Exit codes (documented in the README).
EXIT_OK = 0
EXIT_FATAL = 1
EXIT_USAGE = 2
EXIT_INTERNAL = 3  # a bug in crashlens: one line asking for a report (CRASHLENS_DEBUG=1: the traceback)
EXIT_INTERRUPTED = 130

# Subcommands are imported when used: each pulls in its own stages (audit, CI renderers, the file
# follower), and a scan should not pay for them at start-up.
_SUBCOMMANDS: dict[str, tuple[str, str, str]] = {
    "scan": ("scan", "scan", "Scan log FILES (or stdin) for torch.compile crashes."),
    "watch": ("watch", "watch", "Follow live log files (like tail -F) and diagnose crashes as they complete."),
    "ci": ("ci", "ci", "Annotate a CI run from its log artifacts (GitHub, SARIF, JUnit, GitLab, Markdown)."),
    "audit": ("audit", "audit", "Find every call dynamo will reject in a library's call chain, statically."),
    "signatures": ("signatures", "signatures", "Show and check the signature catalog."),
    "explain": ("signatures", "explain", "Explain one signature: meaning, cause, fixes by context."),
    "mine": ("mine", "mine", "Cluster crashes that no signature knows yet."),
}


class DefaultScanGroup(click.Group):
    """`crashlens FILE...` means `crashlens scan FILE...`; subcommands load on first use."""

    def list_commands(self, ctx: click.Context) -> list[str]:
        return list(_SUBCOMMANDS)

    def get_command(self, ctx: click.Context, name: str) -> click.Command | None:
        spec = _SUBCOMMANDS.get(name)
        if spec is None:
            return None
        module = __import__(f"crashlens.cli.{spec[0]}", fromlist=[spec[1]])
        cmd = getattr(module, spec[1], None)
        return cmd if isinstance(cmd, click.Command) else None

    def format_commands(self, ctx: click.Context, formatter: click.HelpFormatter) -> None:
        with formatter.section("Commands"):
            formatter.write_dl([(name, spec[2]) for name, spec in _SUBCOMMANDS.items()])

    def parse_args(self, ctx: click.Context, args: list[str]) -> list[str]:
        if not args or (args[0] not in _SUBCOMMANDS and args[0] not in ("--help", "-h", "--version")):
            args = ["scan", *args]
        return super().parse_args(ctx, args)


@click.group(cls=DefaultScanGroup, context_settings={"help_option_names": ["-h", "--help"]})
@click.version_option(__version__, "--version", prog_name="crashlens")
def cli() -> None:
    """Diagnose torch.compile / dynamo crashes in SGLang, vLLM and PyTorch logs.

    \b
    crashlens server.log            scan files (or stdin: cmd 2>&1 | crashlens)
    crashlens watch server.log      follow a live log
    crashlens ci artifacts/         annotate a CI run
    crashlens audit pkg.mod:func    find every dynamo blocker in a call chain
    crashlens signatures list       show the catalog
    """


def _register() -> None:
    """Kept for callers that expect it: subcommands now register themselves on first use."""


def main(argv: list[str] | None = None) -> Any:
    """Console-script entry: every error becomes one line on stderr and a documented exit code, never a
    traceback (CRASHLENS_DEBUG=1 shows the traceback of an internal error)."""
    stdout_was_devnull = _stdout_is_devnull()
    try:
        from ..errors import UserError


        # make_context/invoke rather than cli.main: click's own handler turns a closed stdout into exit 1
        # and prints a blank line on Ctrl-C; every outcome is decided here instead.
        args = sys.argv[1:] if argv is None else list(argv)
        with cli.make_context("crashlens", args) as ctx:
            rc = cli.invoke(ctx)
    except click.exceptions.Exit as e:  # --help, --version, ctx.exit(n)
        return _exit(e.exit_code)
    except SystemExit:
        # rich answers a closed stdout by pointing it at /dev/null and exiting 1: the same quiet stop.
        if _stdout_is_devnull() and not stdout_was_devnull:
            return _exit(EXIT_OK)
        raise
    except (click.exceptions.Abort, KeyboardInterrupt):
        return _fail("interrupted", EXIT_INTERRUPTED)
    except click.UsageError as e:
        if type(e).__name__ == "NoArgsIsHelpError" and e.ctx is not None:  # `crashlens signatures`
            return _help(e.ctx.get_help(), EXIT_USAGE)
        msg = e.format_message().splitlines()[0] if e.format_message() else "usage error"
        if "(see " not in msg:
            msg += f" (see `{e.ctx.command_path if e.ctx else 'crashlens'} --help`)"
        return _fail(msg, EXIT_USAGE)
    except click.ClickException as e:
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


def _exit(code: int) -> Any:
    try:
        sys.stdout.flush()
    except BrokenPipeError:
        _silence_stdout()
    except (OSError, ValueError):
        pass
    sys.exit(code)
