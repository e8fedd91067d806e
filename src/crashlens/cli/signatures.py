"""`crashlens signatures list|check` and `crashlens explain ID`: the catalog, shown to a person."""

from __future__ import annotations

import os
import sys

import click

from ..catalog import get_catalog


@click.group("signatures")
def signatures() -> None:
    """Show and check the signature catalog."""


@signatures.command("list")
@click.option("--signatures", "extra", multiple=True, metavar="DIR", help="Extra signature directory.")
def list_cmd(extra: tuple[str, ...]) -> None:
    """One line per signature: id, family, priority, title."""
    cat = get_catalog(list(extra))
    for s in cat.signatures:
        click.echo(f"{s.id:<32} {s.family:<10} {s.priority:>3}  {s.title}")
    click.echo(f"{len(cat.signatures)} signatures, {len(cat.libraries)} library rules")


@signatures.command("check")
@click.option("--signatures", "extra", multiple=True, metavar="DIR", help="Extra signature directory.")
@click.option("-v", "--verbose", is_flag=True, help="Show passing examples too.")
def check_cmd(extra: tuple[str, ...], verbose: bool) -> int:
    """Run every signature's examples and the catalog lint. Exit 1 on any failure."""
    from ..sigcheck import check_catalog, lint

    cat = get_catalog(list(extra))
    results = check_catalog(cat)
    problems = lint(cat)
    failed = [r for r in results if not r.ok]
    for r in results:
        if verbose or not r.ok:
            mark = "ok  " if r.ok else "FAIL"
            click.echo(f"{mark} {r.signature} example {r.example}: {r.reason}  [{r.origin}]")
    for p in problems:
        click.echo(f"LINT {p}")
    passed = len(results) - len(failed)
    click.echo(f"{passed} passed, {len(failed) + len(problems)} failed")
    return 1 if failed or problems else 0


def _complete_id(ctx: click.Context, param: click.Parameter, incomplete: str) -> list[str]:
    return [s.id for s in get_catalog().signatures if s.id.startswith(incomplete)]


@click.command("explain")
@click.argument("sig_id", shell_complete=_complete_id)
@click.option("--signatures", "extra", multiple=True, metavar="DIR", help="Extra signature directory.")
def explain(sig_id: str, extra: tuple[str, ...]) -> None:
    """Explain one signature: what it means, why it happens, its fixes by context."""
    from rich.console import Console
    from rich.text import Text

    cat = get_catalog(list(extra))
    sig = cat.get(sig_id)
    if sig is None:
        close = [s.id for s in cat.signatures if sig_id in s.id][:5]
        hint = f" (did you mean: {', '.join(close)}?)" if close else " (see `crashlens signatures list`)"
        raise click.UsageError(f"no signature with id {sig_id!r}{hint}")
    c = Console(file=sys.stdout, markup=False, highlight=False, emoji=False)
    t = Text()
    t.append(f"{sig.id}", style="bold")
    t.append(f"  ({sig.family}, priority {sig.priority})\n")
    t.append(sig.title + "\n\n", style="bold")
    t.append("What it means\n", style="bold underline")
    t.append(sig.summary + "\n\n")
    if sig.why:
        t.append("Why it happens\n", style="bold underline")
        t.append(sig.why.strip() + "\n\n")
    from ..diagnose import reflow
    from ..render.explain import described, placeholders, stands_for

    t.append("Fixes (best first; contexts in brackets; each <name> is filled in from the crash)\n",
             style="bold underline")
    fixes = sorted(sig.fixes, key=lambda f: f.rank)
    for f in fixes:
        ctx = ",".join(sorted(f.contexts))
        srv = f" servers={','.join(sorted(f.servers))}" if f.servers else ""
        t.append(f"  {f.rank:>3} [{f.kind}] [{ctx}{srv}] {described(f.title)}\n")
        for ln in reflow(described(f.detail)).splitlines():
            t.append(f"        {ln}\n")
        if f.safety:
            t.append(f"        safety: {f.safety}\n", style="dim")
    used = placeholders(*(x for f in fixes for x in (f.title, f.detail)))
    if used:
        t.append("\nFilled in from each crash\n", style="bold underline")
        width = max(len(n) for n in used) + 2
        for name in used:
            t.append(f"  {'<' + name + '>':<{width}}  {stands_for(name)}\n")
    t.append(f"\nExamples: {sum(e.expect_match for e in sig.examples)} positive, "
             f"{sum(not e.expect_match for e in sig.examples)} negative; defined in {sig.path}\n")
    c.print(t)


@signatures.command("new")
@click.option("--from", "group_id", required=True, metavar="ID", help="A group id from `crashlens mine`.")
@click.argument("paths", nargs=-1, required=True, metavar="PATH...")
@click.option("--output", "-o", metavar="FILE", default=None,
              help="Write the draft to FILE (default: stdout); an existing file is not overwritten.")
@click.option("--signatures", "extra", multiple=True, metavar="DIR", help="Extra signature directory.")
def new_cmd(group_id: str, paths: tuple[str, ...], output: str | None, extra: tuple[str, ...]) -> int:
    """Draft a signature (TOML) for group ID of `crashlens mine PATH...`: its examples are the group's
    records in those logs, and `crashlens signatures check` passes it as written."""
    from .mine import mine_paths, run_mine
    from ..stub import DraftError, draft_signature

    if output is not None and os.path.exists(output):
        raise click.UsageError(f"--output {output}: already exists; refusing to overwrite it")
    files = mine_paths(paths, output)
    _acc, groups = run_mine(files, extra, "local", None, None)
    g = next((g for g in groups if g.id == group_id or group_id in g.merged), None)
    if g is None:
        ids = [x.id for x in groups if not x.known][:5]
        hint = f" (unknown groups there: {', '.join(ids)})" if ids else " (crashlens mine PATH... lists the groups)"
        raise click.UsageError(f"no group {group_id!r} in these logs{hint}")
    try:
        text = draft_signature(g, extra, groups)
    except DraftError as e:
        raise click.UsageError(str(e)) from None
    if output is None:
        sys.stdout.write(text)
        return 0
    with open(output, "x", encoding="utf-8") as fh:
        fh.write(text)
    sys.stderr.write(f"crashlens: wrote {output}; fill in its TODOs, then run: crashlens signatures check "
                     f"--signatures {os.path.dirname(os.path.abspath(output))}\n")
    return 0
