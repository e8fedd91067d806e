"""next_blockers: for a crash's culprit frame, the blockers tracing would meet after it in the same chain."""

from __future__ import annotations

import ast
import re
from collections.abc import Sequence

from .callgraph import FuncVal, Walker
from .model import Finding
from .resolve import ModuleIndex
from .rules import load_rules
from .runner import DEFAULT_MAX_DEPTH, make_index


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
    key = (file, function, line, tuple(search_paths or ()), tuple(outer_frames or ()))
    found = _MEMO.get(key)
    if found is None:
        try:
            found = _next_blockers(file, function, line, search_paths, outer_frames)
        except Exception:  # noqa: BLE001 - the diagnosis must never fail because of this extra
            found = []
        if len(_MEMO) >= _MEMO_SIZE:
            _MEMO.clear()
        _MEMO[key] = found
    return list(found)


# A scan diagnoses the same crash on every rank (and again at the end when a start-up fact arrived
# after it): the walk is done once per culprit.
_MEMO: dict[tuple[object, ...], list[Finding]] = {}
_MEMO_SIZE = 256
_DEFS: dict[int, tuple[ast.Module, dict[str, list[ast.FunctionDef | ast.AsyncFunctionDef]]]] = {}


def _find_function(tree: ast.Module, name: str, line: int | None) -> ast.FunctionDef | ast.AsyncFunctionDef | None:
    got = _DEFS.get(id(tree))
    if got is None or got[0] is not tree:  # one walk per parsed file (the tree is kept alive with it)
        by_name: dict[str, list[ast.FunctionDef | ast.AsyncFunctionDef]] = {}
        for node in ast.walk(tree):
            if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
                by_name.setdefault(node.name, []).append(node)
        got = _DEFS[id(tree)] = (tree, by_name)
    candidates = got[1].get(name, [])
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
            from .callgraph import ClassVal
            from .runner import _method

            method = _method(walker, ClassVal(scope, stmt), node.name)
            return method if isinstance(method, FuncVal) else None
    return FuncVal(scope, node)  # nested function: walked without its closure


def _referenced_names(function: ast.FunctionDef | ast.AsyncFunctionDef) -> set[str]:
    """Names a function calls or reads as attributes (properties are read, not called), nested defs excluded."""
    names: set[str] = set()
    stack: list[ast.AST] = list(function.body)
    while stack:
        node = stack.pop()
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef, ast.Lambda)):
            continue
        if isinstance(node, ast.Attribute):
            names.add(node.attr)
        elif isinstance(node, ast.Call) and isinstance(node.func, ast.Name):
            names.add(node.func.id)
        stack.extend(ast.iter_child_nodes(node))
    return names


def _callers_of(
    index: ModuleIndex, top: str, name: str, exclude: ast.AST, limit: int = 2, max_files: int = 24
) -> list[tuple[str, ast.FunctionDef | ast.AsyncFunctionDef]] | None:
    """Up to `limit` functions of the package that call or read `name`; only files that mention it are parsed.

    None when the name is mentioned in more than `max_files` files: too common to have one caller.
    """
    needle = re.compile(rb"\b" + re.escape(name.encode()) + rb"\b")
    callers: list[tuple[str, ast.FunctionDef | ast.AsyncFunctionDef]] = []
    mentioned = [(m, p) for m, p in index.package_files(top) if needle.search(index.read_bytes(p)) is not None]
    if len(mentioned) > max_files:
        return None
    for modname, path in mentioned:
        tree = index.parse(path)
        if tree is None:
            continue
        data = index.read_bytes(path)
        hit_lines = sorted({data.count(b"\n", 0, m.start()) + 1 for m in needle.finditer(data)})
        # descend only into statements whose line span holds a mention of the name
        stack: list[ast.AST] = [tree]
        while stack:
            node = stack.pop()
            if (
                isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef))
                and node is not exclude
                and name in _referenced_names(node)
            ):
                callers.append((modname, node))
                if len(callers) >= limit:
                    return callers
            for child in ast.iter_child_nodes(node):
                if isinstance(child, ast.stmt):
                    first, last = child.lineno, child.end_lineno or child.lineno
                    if any(first <= n <= last for n in hit_lines):
                        stack.append(child)
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
        seen = {id(culprit)}
        for _ in range(DEFAULT_MAX_DEPTH):
            found = _callers_of(index, top, entry_node.name, exclude=entry_node)
            if found is None or len(found) != 1 or id(found[0][1]) in seen:
                break
            entry_mod, entry_node = found[0]
            seen.add(id(entry_node))

    entry = _function_value(walker, entry_mod, entry_node)
    if entry is None:
        return []
    walker.walk_entry(entry)
    findings = walker.results()

    def touches(finding: Finding) -> bool:
        frames = finding.chain
        if line is not None:
            return any(f.file == source.path and f.line == line for f in frames)
        return any(f.file == source.path and f.function == function for f in frames)

    last = max((i for i, f in enumerate(findings) if touches(f)), default=None)
    if last is None:
        return []
    return list(findings[last + 1 :])
