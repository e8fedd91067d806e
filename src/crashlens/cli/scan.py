"""`crashlens scan FILE...`: read logs (or stdin), find crashes, diagnose them, report. (Its click
command is in app.py; nothing here imports click, so a plain scan need not load it.)"""

from __future__ import annotations

import functools
import os
import sys

from ..catalog import get_catalog
from ..pipeline import ScanResult, combine, scan_file, scan_lines
from ..read import check_source, iter_lines, open_source

TYPE_CHECKING = False  # typing.TYPE_CHECKING without importing typing (~4 ms of start-up)
if TYPE_CHECKING:
    from typing import Any


def next_blockers_hook(enabled: bool, local: bool = False) -> Any:
    """The static audit of the installed culprit library, if present (crashlens audit). `local`: the log
    comes from a command run on this machine (`crashlens run`), perhaps under another interpreter, so the
    culprit's own file is the installed copy: its library is looked for where that file is, then on
    crashlens's path."""
    if not enabled:
        return None
    try:
        from ..audit import next_blockers
    except ImportError:
        return None

    def hook(frame: Any, chain: Any = ()) -> list[dict[str, Any]]:
        outer = [(f.file, f.function, f.line) for f in chain]
        paths = [*_package_root(frame.file), *sys.path] if local else None
        return [f.to_json() for f in next_blockers(frame.file, frame.function, frame.line, paths,
                                                     outer_frames=outer)]

    return hook


def _package_root(path: str) -> list[str]:
    """The directory holding the top-level package of an existing file (its site-packages, or a source
    checkout), found by climbing while the directories are packages; [] for a file that is not here."""
    here = os.path.dirname(os.path.abspath(path))
    if not os.path.isfile(path) or not os.path.isfile(os.path.join(here, "__init__.py")):
        return []
    while os.path.isfile(os.path.join(os.path.dirname(here), "__init__.py")):
        here = os.path.dirname(here)
    return [os.path.dirname(here)]


@functools.lru_cache(maxsize=256)
def _installed_here(path: str) -> bool:
    """Whether the culprit's file, as a package-relative path, exists on this interpreter's path
    (a few stat calls, no import): otherwise the audit would have nothing to read."""
    parts = [x for x in path.replace("\\", "/").split("/") if x]
    for k in range(2, min(6, len(parts)) + 1):
        rel = os.path.join(*parts[-k:])
        if any(os.path.isfile(os.path.join(p or ".", rel)) for p in sys.path):
            return True
    return False


def run_scan(files: tuple[str, ...], signatures: tuple[str, ...], audit: bool, jobs: int | None = None) -> ScanResult:
    """Scan each source (stdin for none); several files go to up to `jobs` processes (default: one per
    core). The result is the same whichever way: sources are combined in the order given."""
    names = list(files) or ["-"]
    for name in names:  # every bad name is reported, first one first, before any work starts
        check_source(name)
    jobs = min(jobs or os.cpu_count() or 1, len(names))
    bar = _progress(names)
    # A stream (stdin, a FIFO, `<(cmd)`'s /dev/fd/N) is read here: a worker started afresh may not inherit it.
    if jobs > 1 and not any(name == "-" or not os.path.isfile(name) for name in names):
        import multiprocessing

        methods = multiprocessing.get_all_start_methods()
        # fork shares the catalog already loaded here; elsewhere each worker loads its own.
        ctx = multiprocessing.get_context("fork" if "fork" in methods else None)
        get_catalog(list(signatures))
        with ctx.Pool(jobs) as pool, bar:
            per_source = []
            for r in pool.imap(_scan_one, [(name, signatures, audit) for name in names], chunksize=1):
                per_source.append(r)
                bar.advance(_size(r[0]), 1, len(r[2]))
    else:
        with bar:
            per_source = []
            for name in names:
                per_source.append(_scan_source(name, signatures, audit))
                bar.advance(_size(name), 1, len(per_source[-1][2]))
    return combine(per_source)


class _NoProgress:
    def __enter__(self) -> _NoProgress:  # noqa: PYI034
        return self

    def __exit__(self, *exc: object) -> None:
        pass

    def advance(self, *a: int) -> None:
        pass


def _progress(names: list[str]) -> Any:
    """A progress bar on stderr when it is a terminal (progress.py); nothing is imported otherwise."""
    try:
        tty = sys.stderr.isatty()
    except (AttributeError, ValueError):
        tty = False
    if not tty:
        return _NoProgress()
    from ..progress import Progress

    return Progress(sum(_size(n) for n in names), len(names), "scanning")


def _size(name: str) -> int:
    try:
        return os.path.getsize(name) if name != "-" else 0
    except OSError:
        return 0


def _scan_one(args: tuple[str, tuple[str, ...], bool]) -> tuple[str, int, list[Any]]:
    return _scan_source(*args)


def _scan_source(name: str, signatures: tuple[str, ...], audit: bool) -> tuple[str, int, list[Any]]:
    """One source: a file through the chunked fast path, stdin line by line (it cannot be replayed)."""
    cat = get_catalog(list(signatures))
    hook = _on_first_use(next_blockers_hook, audit) if audit else None
    src, fh = open_source(name)
    try:
        if src.path is None:
            n, diags = scan_lines(src.name, iter_lines(fh), cat, hook)
        else:
            n, diags = scan_file(src.name, src.path, fh, cat, hook)
    finally:
        if src.path is not None:
            fh.close()
    return src.name, n, diags


def _on_first_use(make: Any, *args: Any) -> Any:
    """A hook built when first called: most scans diagnose nothing with a culprit, and the audit's
    imports cost start-up time."""
    real: list[Any] = []

    def hook(*a: Any, **kw: Any) -> Any:
        frame = a[0] if a else None
        if frame is not None and not _installed_here(str(getattr(frame, "file", ""))):
            return []  # the audit would find nothing to read: do not pay for its imports
        if not real:
            real.append(make(*args) or (lambda *_a, **_kw: []))
        return real[0](*a, **kw)

    return hook


def scan_and_report(files: tuple[str, ...], fmt: str, signatures: tuple[str, ...], audit: bool,
                    color: bool | None, jobs: int | None) -> int:
    """The scan command's work once its arguments are parsed (by click in app.py, or by fastpath.py):
    scan, write the report in `fmt`, and give the exit status (1 if a fatal crash was found, whether or
    not the reader of stdout took the whole report)."""
    result = run_scan(files, signatures, audit, jobs)
    from .stops import deliver

    return deliver(lambda: write_report(result, fmt, color, files), 1 if any(d.fatal for d in result.diagnoses) else 0)


def write_report(result: ScanResult, fmt: str, color: bool | None, files: tuple[str, ...] = ()) -> None:
    out = sys.stdout
    if fmt == "json":
        from ..render.json import render

        out.write(render(result))
    elif fmt == "html":
        from ..render.html import render_scan
        from ..render.json import document
        from ..when import with_times

        out.write(render_scan(with_times(document(result), {f: f for f in files if f != "-"})))
    elif fmt == "jsonl":
        from ..render.json import render_line

        for d in result.diagnoses:
            out.write(render_line(d) + "\n")
    else:
        from ..render.terminal import render as render_terminal

        render_terminal(result, out, color=color)
