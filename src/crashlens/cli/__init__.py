"""The crashlens command line: click commands that wire the pipeline stages. No logic lives here."""

from __future__ import annotations

import os
import signal
import sys
from typing import Any

import click

from .. import __version__

# Exit codes (documented in the README).
EXIT_OK = 0
EXIT_FATAL = 1
EXIT_USAGE = 2
EXIT_INTERRUPTED = 130

_SUBCOMMANDS = ("scan", "watch", "ci", "audit", "signatures", "explain", "mine")


class DefaultScanGroup(click.Group):
    """`crashlens FILE...` means `crashlens scan FILE...`."""

    def parse_args(self, ctx: click.Context, args: list[str]) -> list[str]:
        if not args or (args[0] not in self.commands and args[0] not in ("--help", "-h", "--version")):
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
    from . import scan as _scan
    from . import signatures as _sigs

    cli.add_command(_scan.scan)
    cli.add_command(_sigs.signatures)
    cli.add_command(_sigs.explain)
    for mod, name in (("watch", "watch"), ("ci", "ci"), ("audit", "audit"), ("mine", "mine")):
        try:
            module = __import__(f"crashlens.cli.{mod}", fromlist=[name])
        except ImportError:
            continue
        cmd = getattr(module, name, None)
        if isinstance(cmd, click.Command):
            cli.add_command(cmd, name)


def main(argv: list[str] | None = None) -> Any:
    """Console-script entry: user errors become one line and an exit code, never a traceback."""
    from ..catalog import CatalogError
    from ..read import InputError

    _register()
    try:
        rc = cli.main(args=argv, prog_name="crashlens", standalone_mode=False)
    except click.exceptions.Abort:
        sys.stderr.write("crashlens: interrupted\n")
        return _exit(EXIT_INTERRUPTED)
    except KeyboardInterrupt:
        sys.stderr.write("crashlens: interrupted\n")
        return _exit(EXIT_INTERRUPTED)
    except click.UsageError as e:
        msg = e.format_message().splitlines()[0] if e.format_message() else "usage error"
        sys.stderr.write(f"crashlens: {msg} (see crashlens --help)\n")
        return _exit(EXIT_USAGE)
    except click.ClickException as e:
        sys.stderr.write(f"crashlens: {e.format_message()}\n")
        return _exit(e.exit_code if e.exit_code not in (0, 1) else EXIT_USAGE)
    except (InputError, CatalogError) as e:
        sys.stderr.write(f"crashlens: {e}\n")
        return _exit(EXIT_USAGE)
    except BrokenPipeError:
        # `crashlens big.log | head`: the reader left; that is not an error.
        _silence_stdout()
        return _exit(EXIT_OK)
    except OSError as e:
        sys.stderr.write(f"crashlens: {e.strerror or e}\n")
        return _exit(EXIT_USAGE)
    if isinstance(rc, int):
        return _exit(rc)
    return _exit(EXIT_OK)


def _silence_stdout() -> None:
    try:
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, sys.stdout.fileno())
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


if hasattr(signal, "SIGPIPE"):
    # Keep Python's default (raise BrokenPipeError) so the handler above sees it.
    pass
