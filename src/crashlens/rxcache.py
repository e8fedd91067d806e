"""regex.compile for catalog patterns, with the compiled form kept between runs (recache.py does the same for `re`).

Catalog patterns run under the `regex` module (it has per-search timeouts). Importing it costs 10-15 ms
(its parser and compiler, `regex._regex_core`, are 4,600 lines of Python), and it compiles a pattern in
Python too, about 0.5 ms apiece: a scan with 20 crashes compiles ~50 of them. What that work hands to
the C engine is plain data: `regex._main._compile` ends in `_regex.compile(pattern, flags, code, ...)`
with an opcode list, group tables and the required string. This module watches that call once per
pattern (`_capture`), keeps its arguments in the user's cache directory, and on later runs loads the
C engine alone (not the `regex` package) and hands them straight to it: the same engine, the same
arguments, so the very pattern `regex.compile` makes.

The data is only reused by the engine that made it: the interpreter's exact version, the extension
file (path, size, modification time) and its MAGIC number key the file. On any surprise (no such
engine, an entry it refuses) the pattern is compiled the ordinary way. CRASHLENS_NO_CACHE=1 turns the
cache off, as it does recache's and the catalog's.
"""

from __future__ import annotations

import _thread  # a lock without importing threading
import os
import sys

from . import recache

TYPE_CHECKING = False  # typing.TYPE_CHECKING without importing typing (~4 ms of start-up)
if TYPE_CHECKING:
    from typing import Any

MAX_ENTRIES = 2000  # a bound on the file: the shipped catalog has ~300 patterns

# pattern -> the arguments after `pattern` that regex._main._compile passed to _regex.compile
_table: dict[str, tuple[Any, ...]] | None = None
_used: set[str] = set()
_dirty = False
_identity: str | None = None  # what keys the file: see _engine_identity
_spec: Any = None  # where the C engine is
_ext: Any = None  # the C engine
_table_magic: int | None = None  # the engine's MAGIC the kept data was made with
_LOCK = _thread.allocate_lock()  # regex._main is shared: one watcher at a time (see _capture)


def compile(pattern: str) -> Any:
    """regex.compile(pattern, MULTILINE | V0) (how every catalog pattern is compiled), from the cache
    when this engine compiled it before."""
    table = _load()
    args = table.get(pattern)
    if args is not None:
        ext = _engine()
        if ext is not None:
            try:
                rx = ext.compile(pattern, *args)
                _used.add(pattern)
                return rx
            except Exception:  # noqa: BLE001 - a damaged entry: compiled afresh below and replaced
                del table[pattern]
    import regex  # type: ignore[import-untyped]

    if not hasattr(regex, "_regex") and "regex._regex" in sys.modules:
        # The engine was loaded alone (below) before regex was imported: the import found it in
        # sys.modules and used it, but left it unbound as the package's attribute.
        regex._regex = sys.modules["regex._regex"]
    flags = regex.MULTILINE | regex.V0
    if _cache_file() is None:
        return regex.compile(pattern, flags)
    rx, args = _capture(regex, pattern, flags)
    if args is not None:
        _keep(pattern, args)
    return rx


def _capture(regex: Any, pattern: str, flags: int) -> tuple[Any, tuple[Any, ...] | None]:
    """Compile the ordinary way, watching regex._main's call of the C engine: (the pattern, the
    arguments it was made from, or None where they were not seen or cannot be kept)."""
    main = sys.modules.get("regex._main")
    real = getattr(main, "_regex", None)
    if real is None or not hasattr(real, "compile"):
        return regex.compile(pattern, flags), None
    seen: list[tuple[Any, ...]] = []

    class _Watch:
        def __getattr__(self, name: str) -> Any:
            return getattr(real, name)

        @staticmethod
        def compile(*args: Any) -> Any:
            seen.append(args)
            return real.compile(*args)

    with _LOCK:
        main._regex = _Watch()  # type: ignore[union-attr]
        try:
            rx = regex.compile(pattern, flags, cache_pattern=False)  # regex's own cache would hide the call
        finally:
            main._regex = real  # type: ignore[union-attr]
    if len(seen) != 1 or seen[0][0] != pattern:
        return rx, None
    try:
        args = _plain(seen[0][1:])
        import marshal

        marshal.dumps(args)
    except (TypeError, ValueError):
        return rx, None
    return rx, args  # type: ignore[return-value]


def _plain(value: Any) -> Any:
    """The value with int subclasses (regex's RegexFlag, opcodes) as ints, which marshal can write."""
    if isinstance(value, bool) or value is None or isinstance(value, str):
        return value
    if isinstance(value, int):
        return int(value)
    if isinstance(value, tuple):
        return tuple(_plain(v) for v in value)
    if isinstance(value, list):
        return [_plain(v) for v in value]
    if isinstance(value, dict):
        return {_plain(k): _plain(v) for k, v in value.items()}
    if isinstance(value, frozenset):
        return frozenset(_plain(v) for v in value)
    raise TypeError(type(value).__name__)


def _engine_spec() -> Any:
    """Where the C engine `regex._regex` is, found without importing the `regex` package."""
    from importlib.machinery import PathFinder

    locations = getattr(sys.modules.get("regex"), "__path__", None)
    if locations is None:
        spec = PathFinder.find_spec("regex")
        locations = spec.submodule_search_locations if spec is not None else None
    return PathFinder.find_spec("regex._regex", list(locations)) if locations else None


def _engine_identity() -> str:
    """The interpreter and the engine file the kept data belongs to ("" where there is no engine)."""
    global _identity, _spec
    if _identity is None:
        _identity = ""
        try:
            _spec = _engine_spec()
            if _spec is not None and _spec.origin and _spec.loader is not None:
                st = os.stat(_spec.origin)
                _identity = f"{sys.version}|{_spec.origin}|{st.st_size}|{st.st_mtime_ns}"
        except (OSError, ImportError, ValueError):
            pass
    return _identity


def _engine() -> Any:
    """The C engine (regex._regex) the kept data was made for, loaded alone where `regex` is not
    imported yet; None if it cannot be."""
    global _ext
    if _ext is None:
        mod = sys.modules.get("regex._regex")
        if mod is None:
            if not _engine_identity():
                return None
            try:
                # The loader's own two steps (importlib.util.module_from_spec would cost its import).
                mod = _spec.loader.create_module(_spec)
                if mod is None:
                    return None
                _spec.loader.exec_module(mod)
            except (ImportError, OSError, ValueError):
                return None
            # `import regex` later finds this module and uses it: one engine, one Pattern type (it
            # does not bind it as `regex._regex`: sys.modules["regex._regex"] is the way to it).
            sys.modules["regex._regex"] = mod
        _ext = mod
    return _ext if getattr(_ext, "MAGIC", None) == _table_magic else None


def _cache_file() -> str | None:
    """One file per engine: the kept data is only good for the engine that made it, and every
    installation of `regex` (each virtual environment) is another engine file. With one file per
    interpreter, two environments used in turn each found the other's engine in it, compiled every
    pattern again and wrote the file over: a 300 MB scan with 20 crashes imported regex's compiler
    and compiled ~57 patterns on every run (the cache file held 2 KB, its patterns never reused)."""
    where = recache.cache_dir()
    if not where:
        return None
    from zlib import crc32

    engine = crc32(_engine_identity().encode("utf-8", "surrogateescape"))
    return os.path.join(where, f"regex-py{sys.version_info[0]}{sys.version_info[1]}-{engine:08x}.marshal")


def _load() -> dict[str, tuple[Any, ...]]:
    global _table, _table_magic
    if _table is not None:
        return _table
    _table = {}
    path = _cache_file()
    identity = _engine_identity() if path is not None else ""
    if not identity:
        return _table
    try:
        import marshal

        with open(path, "rb") as fh:  # type: ignore[arg-type]
            data = marshal.loads(fh.read())
        if (isinstance(data, tuple) and len(data) == 3 and data[0] == identity and isinstance(data[1], int)
                and isinstance(data[2], dict)):
            _table_magic = data[1]
            _table.update(data[2])
    except (OSError, ValueError, EOFError, TypeError):
        pass  # missing, damaged or from another engine: compiled again, and rewritten
    return _table


def _keep(pattern: str, args: tuple[Any, ...]) -> None:
    global _dirty, _table_magic
    table = _load()
    if len(table) >= MAX_ENTRIES or not _engine_identity():
        return
    if _table_magic is None:  # a first entry: made by the engine regex imported
        _table_magic = getattr(sys.modules.get("regex._regex"), "MAGIC", None)
    table[pattern] = args
    _used.add(pattern)
    if not _dirty:
        import atexit

        _dirty = True
        atexit.register(_save)


def _save() -> None:
    """Write the table back (at exit, when a pattern was added). A full table keeps only what this run
    used, so patterns of older catalogs do not pile up."""
    path = _cache_file()
    identity = _engine_identity()
    magic = getattr(sys.modules.get("regex._regex"), "MAGIC", None)
    if path is None or _table is None or not identity or not isinstance(magic, int):
        return
    if _table_magic is not None and magic != _table_magic:
        return
    table = _table if len(_table) < MAX_ENTRIES else {k: v for k, v in _table.items() if k in _used}
    recache.write_kept(path, (identity, magic, table))
