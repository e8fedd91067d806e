"""`crashlens audit PACKAGE.MODULE:FUNCTION`: list every call dynamo will reject in a library's call chain."""

from __future__ import annotations

import os
import shutil
import sys

import click

EXIT_USAGE = 2


class AuditUsageError(click.ClickException):
    """A request the user can correct (bad spec, module or function not found): one line, exit code 2."""

    exit_code = EXIT_USAGE


@click.command("audit")
@click.argument("entry", metavar="PACKAGE.MODULE:FUNCTION")
@click.option(
    "--site-packages",
    "site_packages",
    multiple=True,
    metavar="DIR",
    help="Where to read the library's source (repeatable). Default: this interpreter's sys.path.",
)
@click.option(
    "--format", "fmt", type=click.Choice(["terminal", "json"]), default="terminal", show_default=True,
    help="terminal: grouped by file; json: schema crashlens/v1.",
)
@click.option("--max-depth", type=click.IntRange(min=1), default=40, show_default=True,
              help="How many calls deep to follow from the entry function.")
def audit(entry: str, site_packages: tuple[str, ...], fmt: str, max_depth: int) -> None:
    """Find every call torch._dynamo will reject on the way from FUNCTION, without importing it.

    \b
    crashlens audit flashinfer.fp4_quantization:fp4_quantize
    crashlens audit mylib.ops:MyOp.forward --site-packages venv/lib/python3.12/site-packages --format json
    """
    from ..audit import AuditError, load_rules
    from ..audit import audit as run_audit
    from ..audit.render import render_json, render_terminal

    for directory in site_packages:
        if not os.path.isdir(directory):
            raise AuditUsageError(f"--site-packages {directory!r} is not a directory")
    try:
        rules = load_rules()
        report = run_audit(entry, list(site_packages) or None, max_depth=max_depth, rules=rules)
    except AuditError as e:
        raise AuditUsageError(str(e)) from None
    except (OSError, ValueError) as e:  # the rules file is missing or malformed
        raise click.ClickException(f"cannot load audit rules: {e}") from None
    if fmt == "json":
        click.echo(render_json(report, rules), nl=False)
    else:
        color = sys.stdout.isatty() and os.environ.get("NO_COLOR") is None
        width = shutil.get_terminal_size((110, 24)).columns
        click.echo(render_terminal(report, rules, color=color, width=max(80, min(width, 160))), nl=False)


if __name__ == "__main__":  # pragma: no cover - `python -m crashlens.cli.audit ...` before the main CLI wires it
    audit(sys.argv[1:])
