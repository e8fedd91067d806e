"""Runs one audit: parses the entry spec, resolves the entry function, walks it, returns an AuditReport."""

from __future__ import annotations

import os
import re
import sys
from collections.abc import Sequence

from .callgraph import UNKNOWN, ClassVal, FuncVal, InstVal, Value, Walker
from .model import AuditReport, BadEntrySpec, EntryNotFound, ModuleNotFound
from .resolve import ModuleIndex, shared_index
from .rules import Rules, load_rules

_SPEC = re.compile(r"^([A-Za-z_]\w*(?:\.[A-Za-z_]\w*)*):([A-Za-z_]\w*(?:\.[A-Za-z_]\w*)*)$")
DEFAULT_MAX_DEPTH = 40


def default_search_paths() -> list[str]:
    """The current interpreter's sys.path, as directories (the empty entry is the working directory)."""
    paths = [p or os.getcwd() for p in sys.path]
    return [p for p in dict.fromkeys(paths) if os.path.isdir(p)]


def parse_entry(spec: str) -> tuple[str, tuple[str, ...]]:
    """`pkg.mod:func` or `pkg.mod:Class.method` → (module, qualname parts)."""
    match = _SPEC.match(spec.strip())
    if match is None:
        raise BadEntrySpec(f"bad entry {spec!r}: expected PACKAGE.MODULE:FUNCTION, e.g. flashinfer.fp4_quantization:fp4_quantize")
    return match.group(1), tuple(match.group(2).split("."))


def make_index(search_paths: Sequence[str] | None, rules: Rules) -> ModuleIndex:
    paths = tuple(search_paths) if search_paths else tuple(default_search_paths())
    return shared_index(tuple(os.path.abspath(p) for p in paths), rules)


def resolve_entry(walker: Walker, module: str, qualname: tuple[str, ...]) -> FuncVal:
    source = walker.index.find(module)
    if source is None:
        where = ", ".join(walker.index.search_paths) or "(no search paths)"
        raise ModuleNotFound(f"module {module!r} not found in {where}")
    if source.kind == "extension":
        raise ModuleNotFound(f"module {module!r} is a compiled extension ({source.path}); there is no source to audit")
    scope = walker.scope(module)
    if scope is None:
        raise ModuleNotFound(f"module {module!r} could not be parsed ({source.path})")
    value: Value = walker.module_attr(scope, qualname[0])
    for part in qualname[1:]:
        if isinstance(value, ClassVal):
            value = _method(walker, value, part)
        else:
            value = UNKNOWN
    if isinstance(value, ClassVal):
        value = _method(walker, value, "__init__")
    if not isinstance(value, FuncVal):
        raise EntryNotFound(f"{module} has no function {'.'.join(qualname)!r}")
    return value


def _method(walker: Walker, cls: ClassVal, name: str) -> Value:
    for klass in walker.class_info(cls).internal_mro:
        method = walker.class_info(klass).methods.get(name)
        if method is not None:
            return FuncVal(klass.scope, method, bound=InstVal(cls), owner=klass)
    return UNKNOWN


def audit(
    entry: str,
    search_paths: Sequence[str] | None = None,
    max_depth: int = DEFAULT_MAX_DEPTH,
    rules: Rules | None = None,
) -> AuditReport:
    """Every call dynamo will reject on the way from `entry`, in the order tracing would meet them.

    Raises BadEntrySpec, ModuleNotFound or EntryNotFound (all AuditError) for a bad request.
    """
    rules = rules or load_rules()
    module, qualname = parse_entry(entry)
    walker = Walker(make_index(search_paths, rules), rules, max_depth=max_depth, walk_also={module.split(".")[0]})
    fn = resolve_entry(walker, module, qualname)
    walker.walk_entry(fn)
    return AuditReport(
        entry=entry,
        entry_file=fn.scope.path,
        findings=tuple(walker.results()),
        functions_walked=walker.functions_walked,
        truncated_at_depth=walker.truncated,
    )
