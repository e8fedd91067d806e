"""`crashlens ci PATH...`: read CI log artifacts, annotate the run (GitHub, SARIF, JUnit, GitLab, Markdown, JSON)."""

from __future__ import annotations

import os
import sys
import tempfile
from typing import Any

import click

from ..catalog import Catalog, get_catalog
from ..cipaths import Location, LocationMapper, expand_inputs, locate_all
from ..pipeline import ScanResult, combine, scan_file
from ..read import InputError, open_source
from .stops import deliver
from .app import complete_path

FORMATS = ("github", "markdown", "sarif", "junit", "gitlab", "json", "html")
# `--output FILE` without a --format: the format its extension names (longest suffix first).
FORMAT_OF_EXTENSION = {".sarif.json": "sarif", ".sarif": "sarif", ".xml": "junit", ".json": "json",
                       ".md": "markdown", ".markdown": "markdown", ".html": "html", ".htm": "html"}
_ORDER_KEY = "crashlens.ci.option_order"


class _OrderedCommand(click.Command):
    """Remembers the order of --format/--output on the command line, so each --output pairs with its --format."""

    def parse_args(self, ctx: click.Context, args: list[str]) -> list[str]:
        _, _, order = self.make_parser(ctx).parse_args(args=list(args))
        ctx.meta[_ORDER_KEY] = [p.name for p in order if getattr(p, "name", None) in ("formats", "outputs")]
        return super().parse_args(ctx, args)


def pair_outputs(order: list[str], formats: tuple[str, ...], outputs: tuple[str, ...],
                 default: str) -> list[tuple[str, str | None]]:
    """(format, output or None for stdout): an --output belongs to the --format just before it."""
    if not formats:
        if len(outputs) > 1:
            raise click.UsageError("several --output given without --format: give a --format before each --output")
        if not outputs or outputs[0] == "-":
            return [(default, None)]
        return [(format_of_output(outputs[0]), outputs[0])]
    if len(order) != len(formats) + len(outputs):  # called without the command line (tests, API): pair by position
        order = [x for i in range(max(len(formats), len(outputs)))
                 for x in (["formats"] if i < len(formats) else []) + (["outputs"] if i < len(outputs) else [])]
    pairs: list[list[Any]] = []
    fi = oi = 0
    for name in order:
        if name == "formats":
            pairs.append([formats[fi], None])
            fi += 1
        else:
            if not pairs or pairs[-1][1] is not None:
                raise click.UsageError(f"--output {outputs[oi]}: put it after the --format it is for")
            pairs[-1][1] = outputs[oi]
            oi += 1
    out = [(f, None if o in (None, "-") else o) for f, o in pairs]
    to_stdout = [f for f, o in out if o is None]
    if len(to_stdout) > 1:
        raise click.UsageError(f"formats {', '.join(to_stdout)} would all go to stdout: give all but one an --output")
    files = [os.path.realpath(o) for _, o in out if o is not None]
    if len(set(files)) != len(files):
        raise click.UsageError("two formats write the same --output file")
    return out


def format_of_output(path: str) -> str:
    """The format an --output file's extension names; a name that names none is refused, never guessed."""
    name = os.path.basename(path).lower()
    for ext, fmt in sorted(FORMAT_OF_EXTENSION.items(), key=lambda kv: -len(kv[0])):
        if name.endswith(ext):
            if fmt in FORMATS:
                return fmt
            raise click.UsageError(f"--output {path}: ci has no {fmt} format; give --format before it"
                                   f" ({', '.join(FORMATS)})")
    known = ", ".join(dict.fromkeys(e for e, f in FORMAT_OF_EXTENSION.items() if f in FORMATS))
    raise click.UsageError(f"--output {path}: cannot tell the format from its name ({known});"
                           " give --format before it")


def default_format() -> str:
    return "github" if os.environ.get("GITHUB_ACTIONS", "").lower() not in ("", "false", "0") else "markdown"


def default_repo_root() -> str:
    for var in ("GITHUB_WORKSPACE", "CI_PROJECT_DIR"):
        v = os.environ.get(var)
        if v and os.path.isdir(v):
            return v
    return os.getcwd()


def _check_output(path: str) -> None:
    parent = os.path.dirname(os.path.abspath(path))
    if os.path.isdir(path):
        raise click.UsageError(f"--output {path}: is a directory")
    if not os.path.isdir(parent):
        raise click.UsageError(f"--output {path}: directory {parent} does not exist")


def scan_artifacts(files: list[str], cat: Catalog) -> ScanResult:
    """Each artifact once, in order; a cut compressed artifact is read up to where it stops (read.py)."""
    from .scan import _progress

    with _progress(files) as bar:
        per_source = _scan_artifacts(files, cat, bar)
    return combine(per_source)


def _scan_artifacts(files: list[str], cat: Catalog, bar: Any) -> list[tuple[str, int, list[Any]]]:
    from .scan import _size

    per_source = []
    for name in files:
        src, fh = open_source(name)
        try:
            n, diags = scan_file(src.name, name, fh, cat)
        finally:
            fh.close()
        per_source.append((src.name, n, diags))
        bar.advance(_size(name), 1, len(diags))
    return per_source


def render(fmt: str, result: ScanResult, locations: dict[str, Location], cat: Catalog, fail_on: str = "fatal") -> str:
    if fmt == "github":
        from ..render import github

        return github.render(result, locations)
    if fmt == "markdown":
        from ..render import markdown

        return markdown.render(result, locations)
    if fmt == "sarif":
        from ..render import sarif

        return sarif.render(result, locations, cat)
    if fmt == "junit":
        from ..render import junit

        return junit.render(result, locations, fail_on)
    if fmt == "gitlab":
        from ..render import gitlab

        return gitlab.render(result, locations)
    from ..render import json as json_render

    if fmt == "html":
        from ..render.html import render_scan
        from ..when import with_times

        return render_scan(with_times(json_render.document(result), {n: n for n, _ in result.sources}))
    return json_render.render(result)


def write_atomic(path: str, text: str) -> None:
    """Temp file in the same directory, then rename: a reader never sees half a report."""
    directory = os.path.dirname(os.path.abspath(path))
    fd, tmp = tempfile.mkstemp(prefix=f".{os.path.basename(path)}.", suffix=".tmp", dir=directory)
    try:
        with os.fdopen(fd, "wb") as fh:
            fh.write(text.encode("utf-8"))
        umask = os.umask(0)
        os.umask(umask)
        os.chmod(tmp, 0o666 & ~umask)
        os.replace(tmp, path)
    except BaseException:
        try:
            os.unlink(tmp)
        except OSError:
            pass
        raise


def append_step_summary(path: str, result: ScanResult, locations: dict[str, Location]) -> None:
    """Append to $GITHUB_STEP_SUMMARY, within what is left of GitHub's 1 MiB per step."""
    from ..render import github, markdown

    try:
        used = os.path.getsize(path)
    except OSError:
        used = 0
    budget = markdown.SUMMARY_LIMIT - used
    if budget < 4096:
        sys.stderr.write("crashlens: warning: $GITHUB_STEP_SUMMARY is nearly full (1 MiB per step); summary skipped\n")
        return
    text = github.summary(result, locations, max_bytes=budget - 2)
    with open(path, "a", encoding="utf-8") as fh:
        fh.write("\n" + text)


@click.command("ci", cls=_OrderedCommand)
@click.argument("paths", nargs=-1, required=True, metavar="PATH...", shell_complete=complete_path)
@click.option("--format", "-f", "formats", multiple=True, type=click.Choice(FORMATS),
              help="Output format; repeat for several (default: github under GitHub Actions, else markdown).")
@click.option("--output", "-o", "outputs", multiple=True, metavar="FILE",
              help="File for the --format given just before it (default: stdout; at most one format on stdout)."
                   " Without --format its extension names the format: .sarif, .xml (junit), .json, .md.")
@click.option("--fail-on", type=click.Choice(["fatal", "any", "never"]), default="fatal", show_default=True,
              help="Exit 1 when a fatal crash (or any crash) was found; never: always exit 0.")
@click.option("--signatures", "signatures", multiple=True, metavar="DIR",
              help="Extra signature directory (overrides built-ins by id). Also $CRASHLENS_SIGNATURES.")
@click.option("--repo-root", metavar="DIR", default=None,
              help="The checked-out repository (default: $GITHUB_WORKSPACE, $CI_PROJECT_DIR or the current directory).")
@click.option("--path-map", "path_map", multiple=True, metavar="FROM=TO",
              help="Map a path prefix in the log (site-packages, container) to a repository path; repeatable.")
@click.pass_context
def ci(ctx: click.Context, paths: tuple[str, ...], formats: tuple[str, ...], outputs: tuple[str, ...], fail_on: str,
       signatures: tuple[str, ...], repo_root: str | None, path_map: tuple[str, ...]) -> int:
    """Annotate a CI run from its log artifacts: files, directories (recursively), glob patterns, .gz logs.

    \b
    crashlens ci logs/                                  GitHub annotations + step summary
    crashlens ci 'logs/**/*.log.gz' -f sarif -o crashlens.sarif -f junit -o crashlens.xml
    crashlens ci logs/ -f gitlab -o gl-code-quality-report.json --path-map /app=.

    Exit codes: 0 nothing failing, 1 a crash matched --fail-on, 2 usage or input error.
    """
    pairs = pair_outputs(ctx.meta.get(_ORDER_KEY, []), formats, outputs, default_format())
    out_files = [o for _, o in pairs if o is not None]
    for o in out_files:
        _check_output(o)
    try:
        files = expand_inputs(paths, outputs=out_files)
        mapper = LocationMapper.create(repo_root or default_repo_root(), path_map)
    except InputError as e:
        raise click.UsageError(str(e)) from None
    cat = get_catalog(list(signatures))
    try:
        result = scan_artifacts(files, cat)
    except InputError as e:
        raise click.UsageError(str(e)) from None
    locations = locate_all(result.diagnoses, mapper)
    if fail_on == "never":
        code = 0
    elif fail_on == "any":
        code = 1 if result.diagnoses else 0
    else:
        code = 1 if any(d.fatal for d in result.diagnoses) else 0
    for fmt, out in pairs:
        text = render(fmt, result, locations, cat, fail_on)
        if out is None:
            deliver(lambda: _write_stdout(text), code)  # a reader that leaves early does not change the code
        else:
            try:
                write_atomic(out, text)
            except OSError as e:
                raise click.UsageError(f"--output {out}: cannot write ({e.strerror or e})") from None
    summary_path = os.environ.get("GITHUB_STEP_SUMMARY")
    if summary_path and any(f == "github" for f, _ in pairs):
        try:
            append_step_summary(summary_path, result, locations)
        except OSError as e:
            sys.stderr.write(f"crashlens: warning: cannot append to $GITHUB_STEP_SUMMARY ({e.strerror or e})\n")
    from ..render.text import plural

    unlocated = sum(1 for loc in locations.values() if loc.path is None)
    if unlocated and any(f in ("sarif", "gitlab") for f, _ in pairs):
        sys.stderr.write(
            f"crashlens: note: {plural(unlocated, 'finding points', 'findings point')} outside the repository"
            f" ({mapper.repo_root}); SARIF lists"
            " them as notifications and GitLab leaves them out. Use --path-map or keep the logs in the checkout.\n")
    return code


def _write_stdout(text: str) -> None:
    sys.stdout.flush()
    sys.stdout.buffer.write(text.encode("utf-8"))
    sys.stdout.flush()
