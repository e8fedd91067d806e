"""`crashlens mine FILE...`: cluster crashes that no signature knows yet."""

from __future__ import annotations

import sys
from typing import Any

import click


@click.command("mine")
@click.argument("files", nargs=-1, required=True)
@click.option("--all", "include_known", is_flag=True, help="Cluster every crash, not only unknown ones.")
@click.option("--stub", is_flag=True, help="Print a signature TOML stub for each cluster.")
@click.option("--signatures", "extra", multiple=True, metavar="DIR", help="Extra signature directory.")
def mine(files: tuple[str, ...], include_known: bool, stub: bool, extra: tuple[str, ...]) -> int:
    """Group crashes by masked message and culprit function, most frequent first."""
    from rich.console import Console
    from rich.text import Text

    from ..catalog import get_catalog
    from ..mine import mine_records, records_from_lines, signature_stub
    from ..read import iter_lines, open_source

    cat = get_catalog(list(extra))
    records: list[Any] = []
    for name in files:
        src, fh = open_source(name)
        try:
            records.extend(records_from_lines(src.name, iter_lines(fh)))
        finally:
            if src.path is not None:
                fh.close()
    clusters = mine_records(records, cat, include_known)
    out = Console(file=sys.stdout, markup=False, highlight=False, emoji=False)
    if not clusters:
        out.print(Text(f"no unknown crashes in {len(records)} crash record(s)"))
        return 0
    for n, c in enumerate(clusters, 1):
        t = Text()
        t.append(f"{n}. ×{c.count} ", style="bold")
        t.append(f"{c.exception or '(no exception line)'}: {c.template}\n")
        if c.function:
            t.append(f"   culprit function: {c.function}\n")
        if c.matched_by:
            t.append(f"   currently matched by: {c.matched_by}\n", style="dim")
        if c.ranks:
            t.append(f"   ranks: {', '.join(sorted(c.ranks))}\n")
        t.append("   at: " + ", ".join(f"{s}:{ln}" for s, ln in c.where[:5]) + "\n", style="dim")
        out.print(t)
        if stub:
            out.print(Text(signature_stub(c, n)))
    return 0
