"""next_blockers: for a crash's culprit frame, the blockers tracing would meet after it in the same chain."""

from __future__ import annotations

import ast
from collections.abc import Sequence

from .callgraph import FuncVal, Walker
from .model import Finding
from .resolve import ModuleIndex
from .rules import load_rules
from .runner import DEFAULT_MAX_DEPTH, make_index

LoggedFrame = tuple[str, str, "int | None"]


def next_blockers(
    file: str,
    function: str,
    line: int | None = None,
    search_paths: list[str] | None = None,
    *,
    outer_frames: Sequence[tuple[str, str, int | None]] | None = None,
) -> list[Finding]:
    """Blockers after the culprit call, from the installed copy of the culprit's library; [] on any problem.

    `file` is the culprit frame's path as printed in the log, possibly from another machine: it is
    mapped to the same module here by the part after site-packages/dist-packages.

    Where the walk starts (the chain's entry):
    - `outer_frames`, when given, are the crash's other user-code frames, outermost first (the
      `from user code:` block). The outermost one that maps to a module of the same installed
      top-level package is the entry, so the walk follows the chain the crash actually took.
    - Otherwise the walk climbs from the culprit function to its caller while the package has
      exactly one function calling it by that name, and starts at the top of that climb; with
      several possible callers it starts at the culprit function itself.

    The result is the findings of that walk that come after the culprit: after the last finding
    whose chain passes through the culprit frame (file, line) or sits on it. A `line` that falls
    outside the installed function (another version of the library) is ignored, and the culprit is
    the function as a whole.
    """
    try:
        return _next_blockers(file, function, line, search_paths, outer_frames)
    except Exception:  # noqa: BLE001 - the diagnosis must never fail because of this extra
        return []


def _find_function(tree: ast.Module, name: str, line: int | None) -> ast.FunctionDef | ast.AsyncFunctionDef | None:
    candidates = [
        node
        for node in ast.walk(tree)
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)) and node.name == name
    ]
    if line is not None:
        for node in candidates:
            if node.lineno <= line <= (node.end_lineno or node.lineno):
                return node
    return candidates[0] if candidates else None


def _function_value(walker: Walker, modname: str, node: ast.FunctionDef | ast.AsyncFunctionDef) -> FuncVal | None:
    scope = walker.scope(modname)
    if scope is None:
        return None
    for stmt in scope.tree.body:
        if stmt is node:
            return FuncVal(scope, node)
        if isinstance(stmt, ast.ClassDef) and node in stmt.body:
            from .runner import _method
            from .callgraph import ClassVal

            method = _method(walker, ClassVal(scope, stmt), node.name)
            return method if isinstance(method, FuncVal) else None
    return FuncVal(scope, node)  # nested function: walked without its closure


def _callers_index(index: ModuleIndex, top: str) -> dict[str, list[tuple[str, ast.FunctionDef | ast.AsyncFunctionDef]]]:
    cache: dict[str, dict[str, list[tuple[str, ast.FunctionDef | ast.AsyncFunctionDef]]]] = index.__dict__.setdefault(
        "_callers_by_package", {}
    )
    if top in cache:
        return cache[top]
    callers: dict[str, list[tuple[str, ast.FunctionDef | ast.AsyncFunctionDef]]] = {}
    source = index.find(top)
    if source is not None and source.is_package:
        import os

        package_dir = os.path.dirname(source.path) if source.kind == "source" else source.path
        for dirpath, _dirnames, filenames in os.walk(package_dir):
            for filename in filenames:
                if not filename.endswith(".py"):
                    continue
                path = os.path.join(dirpath, filename)
                rel = os.path.relpath(path, source.root)[:-3].replace(os.sep, ".")
                modname = rel[: -len(".__init__")] if rel.endswith(".__init__") else rel
                tree = index.parse(path)
                if tree is None:
                    continue
                for node in ast.walk(tree):
                    if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
                        called = {
                            sub.func.attr if isinstance(sub.func, ast.Attribute) else sub.func.id
                            for sub in ast.walk(node)
                            if isinstance(sub, ast.Call) and isinstance(sub.func, (ast.Attribute, ast.Name))
                        }
                        for name in called:
                            callers.setdefault(name, []).append((modname, node))
    cache[top] = callers
    return callers


def _next_blockers(
    file: str,
    function: str,
    line: int | None,
    search_paths: list[str] | None,
    outer_frames: Sequence[tuple[str, str, int | None]] | None,
) -> list[Finding]:
    rules = load_rules()
    index = make_index(search_paths, rules)
    source = index.locate_logged_file(file)
    if source is None:
        return []
    tree = index.parse(source.path)
    if tree is None:
        return []
    culprit = _find_function(tree, function, line)
    if culprit is None:
        return []
    if line is not None and not (culprit.lineno <= line <= (culprit.end_lineno or culprit.lineno)):
        line = None
    top = source.name.split(".")[0]
    walker = Walker(index, rules, max_depth=DEFAULT_MAX_DEPTH, walk_also={top})

    entry_mod, entry_node = source.name, culprit
    for outer_file, outer_function, outer_line in outer_frames or ():
        outer_source = index.locate_logged_file(outer_file)
        if outer_source is None or outer_source.name.split(".")[0] != top:
            continue
        outer_tree = index.parse(outer_source.path)
        node = _find_function(outer_tree, outer_function, outer_line) if outer_tree is not None else None
        if node is not None:
            entry_mod, entry_node = outer_source.name, node
            break
    else:
        callers = _callers_index(index, top)
        seen = {id(culprit)}
        for _ in range(DEFAULT_MAX_DEPTH):
            found = [c for c in callers.get(entry_node.name, []) if id(c[1]) != id(entry_node)]
            if len(found) != 1 or id(found[0][1]) in seen:
                break
            entry_mod, entry_node = found[0]
            seen.add(id(entry_node))

    entry = _function_value(walker, entry_mod, entry_node)
    if entry is None:
        return []
    walker.walk_entry(entry)
    findings = walker.findings

    def touches(finding: Finding) -> bool:
        frames = finding.chain
        if line is not None:
            return any(f.file == source.path and f.line == line for f in frames)
        return any(f.file == source.path and f.function == function for f in frames)

    last = max((i for i, f in enumerate(findings) if touches(f)), default=None)
    if last is None:
        return []
    return list(findings[last + 1 :])
