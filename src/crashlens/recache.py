"""re.compile with the compiled form kept between runs.

crashlens compiles about 60 regular expressions of its own (framing, traceback and culprit rules,
all literals in its source; catalog patterns go to the `regex` module instead). CPython's `re`
parses and compiles each one in Python, about 0.25 ms apiece: 12-15 ms of a 70 ms scan. The result
of that work is plain data (an opcode list, flags and group names) handed to the C engine,
`_sre.compile`. This module keeps that data in the user's cache directory (next to the
parsed-catalog cache) and hands it straight to `_sre.compile` on later runs.

The data is only reused by the exact interpreter that made it (its full version string and the SRE
engine's magic number key the file), `_sre.compile` checks the opcodes it is given, and on any
surprise the pattern is compiled the ordinary way. CRASHLENS_NO_CACHE=1 turns the cache off, as it
does the catalog's.
"""

from __future__ import annotations

import os
import re
import sys

try:  # the parser and compiler re.compile uses: re._parser/_compiler from 3.11, sre_* before
    from re import _compiler, _parser  # type: ignore[attr-defined]
except ImportError:  # pragma: no cover - Python 3.10
    import sre_compile as _compiler
    import sre_parse as _parser

import _sre  # type: ignore[import-not-found]

TYPE_CHECKING = False  # typing.TYPE_CHECKING without importing typing (~4 ms of start-up)
if TYPE_CHECKING:
    from typing import Any, AnyStr

MAX_ENTRIES = 2000  # a bound on the file: crashlens's own patterns are ~150

# pattern, flags -> (flags, code, groups - 1, groupindex, indexgroup): _sre.compile's arguments
_table: dict[tuple[Any, int], tuple[Any, ...]] | None = None
_used: set[tuple[Any, int]] = set()
_dirty = False


def compile(pattern: AnyStr, flags: int = 0) -> re.Pattern[AnyStr]:
    """re.compile(pattern, flags), from the cache when this interpreter compiled it before."""
    table = _load()
    key = (pattern, int(flags))
    args = table.get(key)
    if args is not None:
        try:
            rx: re.Pattern[AnyStr] = _sre.compile(pattern, *args)
            _used.add(key)
            return rx
        except Exception:  # noqa: BLE001 - a damaged entry: compiled afresh below and replaced
            del table[key]
    try:
        args = _compiled_form(pattern, int(flags))
        rx = _sre.compile(pattern, *args)
    except Exception:  # noqa: BLE001 - an internal this Python lacks: the ordinary way, not kept
        return re.compile(pattern, flags)
    _keep(key, args)
    return rx


def _compiled_form(pattern: Any, flags: int) -> tuple[Any, ...]:
    """What re._compiler.compile works out and passes to _sre.compile (the same steps, 3.10 to 3.13)."""
    p = _parser.parse(pattern, flags)
    code = _compiler._code(p, flags)
    groupindex = dict(p.state.groupdict)
    indexgroup: list[str | None] = [None] * p.state.groups
    for name, i in groupindex.items():
        indexgroup[i] = name
    # int(): some opcodes are int subclasses, which marshal cannot write
    return (int(flags | p.state.flags), [int(c) for c in code], p.state.groups - 1, groupindex, tuple(indexgroup))


def _keep(key: tuple[Any, int], args: tuple[Any, ...]) -> None:
    global _dirty
    table = _load()
    if len(table) >= MAX_ENTRIES:
        return
    table[key] = args
    _used.add(key)
    if not _dirty:
        import atexit

        _dirty = True
        atexit.register(_save)


def _version() -> str:
    return f"{sys.version}|{getattr(_sre, 'MAGIC', '')}|{getattr(_sre, 'CODESIZE', '')}"


def cache_dir() -> str | None:
    """Where crashlens keeps what it worked out in earlier runs (this table, the parsed catalog), or
    None: CRASHLENS_NO_CACHE is set, or there is no home directory to put it in."""
    if os.environ.get("CRASHLENS_NO_CACHE"):
        return None
    base = os.environ.get("XDG_CACHE_HOME")
    if not base:
        home = os.path.expanduser("~")
        if home.startswith("~"):  # no $HOME and no passwd entry: not the current directory instead
            return None
        base = os.path.join(home, ".cache")
    return os.path.join(base, "crashlens")


def _cache_file() -> str | None:
    where = cache_dir()
    return where and os.path.join(where, f"re-py{sys.version_info[0]}{sys.version_info[1]}.marshal")


def _load() -> dict[tuple[Any, int], tuple[Any, ...]]:
    global _table
    if _table is not None:
        return _table
    _table = {}
    path = _cache_file()
    if path is None:
        return _table
    try:
        import marshal

        with open(path, "rb") as fh:
            data = marshal.loads(fh.read())  # marshal.load(fh) reads in tiny pieces: 20 times slower
        if isinstance(data, tuple) and len(data) == 2 and data[0] == _version() and isinstance(data[1], dict):
            _table.update(data[1])
    except (OSError, ValueError, EOFError, TypeError):
        pass  # missing, damaged or from another Python: compiled again, and rewritten
    return _table


def _save() -> None:
    """Write the table back (at exit, when a pattern was added). A full table keeps only what this run
    used, so patterns of older crashlens versions do not pile up."""
    path = _cache_file()
    if path is None or _table is None:
        return
    table = _table if len(_table) < MAX_ENTRIES else {k: v for k, v in _table.items() if k in _used}
    write_kept(path, (_version(), table))


def write_kept(path: str | os.PathLike[str], value: Any) -> None:
    """Write `value` (marshal) to a cache file at once, through a temporary file beside it, so that a
    run reading it meanwhile sees the old file or the new one, never half of one. A read-only home,
    or a value marshal cannot hold, writes nothing: the next run works it out again."""
    try:
        import marshal
        import tempfile

        blob = marshal.dumps(value)
        where = os.path.dirname(path)
        os.makedirs(where, exist_ok=True)
        fd, tmp = tempfile.mkstemp(dir=where, prefix=".kept-", suffix=".marshal")
        with os.fdopen(fd, "wb") as fh:
            fh.write(blob)
        os.replace(tmp, path)
    except (OSError, ValueError):
        pass
