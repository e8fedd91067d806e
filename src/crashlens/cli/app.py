"""The click command line: the `crashlens` group and its default command, `scan`. Other subcommands
live in their own modules and are imported when used. (cli/fastpath.py answers the commonest command
lines without importing this; tests/test_cli_fastpath.py holds the two to the same parse.)"""

from __future__ import annotations

import sys
from typing import Any

import click

from .. import __version__
from . import COMPLETE_VAR, FORMATS, GROUP_WORDS, SUBCOMMANDS, unknown_command

COMPLETION_SHELLS = ("bash", "zsh", "fish")


def complete_path(ctx: click.Context, param: click.Parameter, incomplete: str) -> list[Any]:
    """Shell completion for a log-file argument: the shell's own file-name completion."""
    from click.shell_completion import CompletionItem

    return [CompletionItem(incomplete, type="file")]


def complete(instruction: str) -> int:
    """`_CRASHLENS_COMPLETE=bash_source crashlens` (zsh_source, fish_source) prints the shell's completion
    script; the script then calls crashlens with `{shell}_complete` on every Tab."""
    from click.shell_completion import shell_complete

    shell, _, action = instruction.partition("_")
    if shell not in COMPLETION_SHELLS or action not in ("source", "complete"):
        raise click.UsageError(f"{COMPLETE_VAR}={instruction}: not a completion instruction; use one of "
                               + ", ".join(f"{sh}_source" for sh in COMPLETION_SHELLS))
    return shell_complete(cli, {}, "crashlens", COMPLETE_VAR, instruction)


class DefaultScanGroup(click.Group):
    """`crashlens FILE...` means `crashlens scan FILE...`; subcommands load on first use."""

    def list_commands(self, ctx: click.Context) -> list[str]:
        return list(SUBCOMMANDS)

    def get_command(self, ctx: click.Context, name: str) -> click.Command | None:
        spec = SUBCOMMANDS.get(name)
        if spec is None:
            return None
        module = __import__(f"crashlens.cli.{spec[0]}", fromlist=[spec[1]])
        cmd = getattr(module, spec[1], None)
        return cmd if isinstance(cmd, click.Command) else None

    def format_commands(self, ctx: click.Context, formatter: click.HelpFormatter) -> None:
        with formatter.section("Commands"):
            formatter.write_dl([(name, spec[2]) for name, spec in SUBCOMMANDS.items()])

    def shell_complete(self, ctx: click.Context, incomplete: str) -> list[Any]:
        """`crashlens <Tab>`: the subcommands that match, else the shell's file names (a log to scan)."""
        from click.shell_completion import CompletionItem

        items = super().shell_complete(ctx, incomplete)
        return items if incomplete.startswith("-") else [CompletionItem(incomplete, type="file"), *items]

    def parse_args(self, ctx: click.Context, args: list[str]) -> list[str]:
        if not args and ctx.resilient_parsing:  # shell completion of the first word: offer the subcommands
            return super().parse_args(ctx, args)
        if args and not ctx.resilient_parsing:
            mistyped = unknown_command(args[0])
            if mistyped:
                from ..errors import UserError

                raise UserError(mistyped)
        if not args or (args[0] not in SUBCOMMANDS and args[0] not in GROUP_WORDS):
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
    crashlens fix server.log        a patch for the top mechanical fix (--apply, --revert)
    crashlens run --fix -- CMD      run CMD, fix and re-run until it compiles
    crashlens signatures list       show the catalog
    """


@click.command("scan")
@click.argument("files", nargs=-1, type=str, shell_complete=complete_path)
@click.option("--format", "fmt", type=click.Choice(FORMATS), default="terminal",
              show_default=True, help="Output format; json is the crashlens/v1 document.")
@click.option("--signatures", "signatures", multiple=True, metavar="DIR",
              help="Extra signature directory (overrides built-ins by id). Also $CRASHLENS_SIGNATURES.")
@click.option("--audit/--no-audit", default=True, show_default=True,
              help="Add the next blockers found statically in the installed culprit library.")
@click.option("--color/--no-color", default=None, help="Force colour on or off (default: auto, NO_COLOR respected).")
@click.option("--follow", is_flag=True, help="Stream: pass input through and print diagnoses as crashes complete.")
@click.option("-j", "--jobs", type=click.IntRange(min=1), default=None, metavar="N",
              help="Scan up to N files at once (default: one per core); the output is the same.")
def scan(files: tuple[str, ...], fmt: str, signatures: tuple[str, ...], audit: bool, color: bool | None,
         follow: bool, jobs: int | None) -> int:
    """Scan log FILES (or stdin, or -) for torch.compile crashes. Exit 1 if a fatal crash was found."""
    if follow:
        try:
            from .watch import follow_stdin
        except ImportError:
            raise click.UsageError("--follow is not available in this build") from None
        return int(follow_stdin(fmt=fmt, signatures=signatures, audit=audit, color=color))
    if not files and sys.stdin.isatty():
        raise click.UsageError("no log file given (pass FILE..., or pipe a log: cmd 2>&1 | crashlens)")
    from .scan import scan_and_report

    return scan_and_report(files, fmt, signatures, audit, color, jobs)
