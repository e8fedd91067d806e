"""Walks a call graph from an entry function, statically and in dynamo's tracing order, collecting rejected calls.

The walk is a small abstract interpreter over `ast`: it evaluates expressions to coarse values (a
function, a class, an instance, a module, an external dotted name, a namespace, an FFI module) so
that `self.x.y()`, `get_module().f()` and `from .a import b as c` resolve, and it visits calls in
the order Python evaluates them: the callee expression, then the arguments, then the call. Both
branches of an `if` are walked (the audit cannot know which one runs). A function is walked once
per receiver class; repeated calls reuse its findings and return value.
"""

from __future__ import annotations

import ast
import builtins
from collections.abc import Iterable

from .._struct import dataclass, field, replace
from .model import ChainFrame, Finding
from .resolve import ModuleIndex, ModuleSource
from .rules import CallRule, Construct, Rules

FunctionNode = ast.FunctionDef | ast.AsyncFunctionDef | ast.Lambda

_BUILTIN_NAMES = frozenset(dir(builtins))
_PROPERTY_DECORATORS = frozenset({"property", "functools.cached_property", "cached_property"})
_NON_RECORDING_DEPTH = 4
_CALL_TEXT_MAX = 100


# ---------------------------------------------------------------------------------------------- values


class Value:
    __slots__ = ()


class _Unknown(Value):
    __slots__ = ()

    def __repr__(self) -> str:
        return "UNKNOWN"


UNKNOWN = _Unknown()


@dataclass(frozen=True, slots=True, eq=False)
class Ext(Value):
    """A name outside the walk: `subprocess.run` (ref), a `pathlib.Path` object (instance), `Path.exists` (member)."""

    name: str
    kind: str = "ref"  # ref | instance | member
    flagged: bool = False  # created by a call already reported


@dataclass(frozen=True, slots=True, eq=False)
class UnknownMember(Value):
    """An attribute of a value whose type the walk could not infer."""

    attr: str


@dataclass(frozen=True, slots=True, eq=False)
class ModVal(Value):
    scope: ModuleScope


@dataclass(frozen=True, slots=True, eq=False)
class ClassVal(Value):
    scope: ModuleScope
    node: ast.ClassDef


@dataclass(frozen=True, slots=True, eq=False)
class InstVal(Value):
    cls: ClassVal


@dataclass(frozen=True, slots=True, eq=False)
class FuncVal(Value):
    scope: ModuleScope
    node: FunctionNode
    bound: Value | None = None  # the receiver of a bound method
    owner: ClassVal | None = None  # the class a method was found on (for super())
    closure: tuple[dict[str, Value], ...] = ()


@dataclass(frozen=True, slots=True, eq=False)
class NsVal(Value):
    """A SimpleNamespace(...) or a dict literal: attribute / key → value."""

    attrs: dict[str, Value]


@dataclass(frozen=True, slots=True, eq=False)
class NsMethod(Value):
    ns: NsVal
    name: str


@dataclass(frozen=True, slots=True, eq=False)
class FfiVal(Value):
    """A compiled extension module or an FFI-loaded module, or one of its functions (member=True)."""

    origin: str
    member: bool = False


@dataclass(frozen=True, slots=True, eq=False)
class SuperVal(Value):
    cls: ClassVal
    inst: Value


@dataclass(frozen=True, slots=True, eq=False)
class UnionVal(Value):
    options: tuple[Value, ...]


def _vkey(v: Value) -> object:
    if isinstance(v, InstVal):
        return ("inst", id(v.cls.node))
    if isinstance(v, ClassVal):
        return ("cls", id(v.node))
    if isinstance(v, FuncVal):
        return ("fn", id(v.node), _vkey(v.bound) if v.bound is not None else None)
    if isinstance(v, Ext):
        return ("ext", v.name, v.kind)
    if isinstance(v, ModVal):
        return ("mod", v.scope.name)
    if isinstance(v, FfiVal):
        return ("ffi", v.origin, v.member)
    return ("id", id(v))


def union(values: Iterable[Value]) -> Value:
    seen: dict[object, Value] = {}
    for value in values:
        for option in value.options if isinstance(value, UnionVal) else (value,):
            if option is UNKNOWN:
                continue
            seen.setdefault(_vkey(option), option)
    if not seen:
        return UNKNOWN
    if len(seen) == 1:
        return next(iter(seen.values()))
    return UnionVal(tuple(seen.values()))


# ---------------------------------------------------------------------------------------------- scopes


@dataclass(eq=False, slots=True)
class ModuleScope:
    """A parsed module: its top-level bindings, resolved lazily to values."""

    name: str
    source: ModuleSource
    tree: ast.Module
    bindings: dict[str, tuple[str, ast.AST, ast.alias | None]] = field(default_factory=dict)
    star_imports: list[ast.ImportFrom] = field(default_factory=list)
    resolved: dict[str, Value] = field(default_factory=dict)
    resolving: set[str] = field(default_factory=set)

    @property
    def path(self) -> str:
        return self.source.path

    @property
    def is_package(self) -> bool:
        return self.source.is_package


def _collect_bindings(scope: ModuleScope, body: list[ast.stmt]) -> None:
    for stmt in body:
        if isinstance(stmt, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            scope.bindings[stmt.name] = ("def", stmt, None)
        elif isinstance(stmt, ast.Import):
            for alias in stmt.names:
                scope.bindings[alias.asname or alias.name.split(".")[0]] = ("import", stmt, alias)
        elif isinstance(stmt, ast.ImportFrom):
            for alias in stmt.names:
                if alias.name == "*":
                    scope.star_imports.append(stmt)
                else:
                    scope.bindings[alias.asname or alias.name] = ("from", stmt, alias)
        elif isinstance(stmt, ast.Assign):
            for target in stmt.targets:
                if isinstance(target, ast.Name):
                    scope.bindings[target.id] = ("assign", stmt, None)
        elif isinstance(stmt, ast.AnnAssign) and isinstance(stmt.target, ast.Name):
            scope.bindings[stmt.target.id] = ("assign", stmt, None)
        elif isinstance(stmt, ast.If):
            _collect_bindings(scope, stmt.body)
            _collect_bindings(scope, stmt.orelse)
        elif isinstance(stmt, ast.Try) or type(stmt).__name__ == "TryStar":
            _collect_bindings(scope, stmt.body)  # type: ignore[attr-defined]
            for handler in stmt.handlers:  # type: ignore[attr-defined]
                _collect_bindings(scope, handler.body)
            _collect_bindings(scope, stmt.orelse)  # type: ignore[attr-defined]
            _collect_bindings(scope, stmt.finalbody)  # type: ignore[attr-defined]
        elif isinstance(stmt, ast.With):
            _collect_bindings(scope, stmt.body)


@dataclass(eq=False, slots=True)
class ClassInfo:
    methods: dict[str, ast.FunctionDef | ast.AsyncFunctionDef]
    assigns: dict[str, ast.expr]
    annotations: dict[str, ast.expr]
    self_assigns: dict[str, list[tuple[ast.FunctionDef | ast.AsyncFunctionDef, ast.expr]]]
    internal_mro: tuple[ClassVal, ...] = ()
    external_bases: tuple[str, ...] = ()
    mro_done: bool = False


@dataclass(eq=False, slots=True)
class Ctx:
    """Where the walk is: the module, the local variables, the chain of call sites that led here."""

    scope: ModuleScope
    env: dict[str, Value]
    closure: tuple[dict[str, Value], ...]
    function: str
    chain: tuple[ChainFrame, ...]
    recording: bool
    depth: int
    owner: ClassVal | None = None
    self_val: Value | None = None
    via_cache: bool = False
    fn_id: int = 0
    branch: int = 0
    returns: list[Value] = field(default_factory=list)


def _call_line(node: ast.Call) -> int:
    # CPython 3.11+ reports a method call on the line of the attribute name, not the receiver's.
    if isinstance(node.func, ast.Attribute) and node.func.end_lineno is not None:
        return node.func.end_lineno
    return node.lineno


def _node_line(node: ast.AST) -> int:
    """The line an attribute access is reported on: where the attribute name is."""
    end = getattr(node, "end_lineno", None)
    start = getattr(node, "lineno", None)
    return int(end if isinstance(end, int) else start if isinstance(start, int) else 0)


def _text(node: ast.AST, suffix: str = "") -> str:
    text = " ".join(ast.unparse(node).split())
    if len(text) > _CALL_TEXT_MAX:
        text = text[: _CALL_TEXT_MAX - 3] + "..."
    return text + suffix


def _decorator_name(node: ast.expr) -> str:
    target = node.func if isinstance(node, ast.Call) else node
    parts: list[str] = []
    while isinstance(target, ast.Attribute):
        parts.append(target.attr)
        target = target.value
    if isinstance(target, ast.Name):
        parts.append(target.id)
        return ".".join(reversed(parts))
    return ""


# ---------------------------------------------------------------------------------------------- walker


class Walker:
    """One audit: findings in tracing order, deduplicated by (file, line, call)."""

    def __init__(self, index: ModuleIndex, rules: Rules, max_depth: int = 40, walk_also: Iterable[str] = ()) -> None:
        self.index = index
        self.rules = rules
        self.max_depth = max_depth
        self.walk_also = frozenset(walk_also)
        self.findings: list[Finding] = []
        self._seen: set[tuple[str, int, str]] = set()
        self._repeats: dict[tuple[str, int, str], list[int]] = {}
        self._finding_fns: list[int] = []
        self._scopes: dict[str, ModuleScope | None] = {}
        self._classes: dict[int, ClassInfo] = {}
        self._memo: dict[object, Value] = {}
        self._active: set[object] = set()
        self._decorators: dict[int, tuple[str, ...]] = {}
        self._ann_cache: dict[tuple[int, str], Value] = {}
        self._self_attr_cache: dict[tuple[int, str], Value] = {}
        self.functions_walked = 0
        self.truncated = False

    # ------------------------------------------------------------------ modules

    def walkable(self, modname: str) -> bool:
        if modname.split(".")[0] in self.walk_also:
            source = self.index.find(modname)
            return source is not None and source.kind in ("source", "namespace")
        return self.index.is_walkable(modname)

    def scope(self, modname: str) -> ModuleScope | None:
        if modname in self._scopes:
            return self._scopes[modname]
        scope: ModuleScope | None = None
        source = self.index.find(modname)
        if source is not None and self.walkable(modname):
            if source.kind == "namespace":
                tree: ast.Module | None = ast.Module(body=[], type_ignores=[])
            else:
                tree = self.index.parse(source.path)
            if tree is not None:
                scope = ModuleScope(modname, source, tree)
                _collect_bindings(scope, tree.body)
        self._scopes[modname] = scope
        return scope

    def module_value(self, modname: str) -> Value:
        scope = self.scope(modname)
        if scope is not None:
            return ModVal(scope)
        if not self.index.is_stdlib(modname) and not self.rules.is_opaque_package(modname.split(".")[0]):
            source = self.index.find(modname)
            if source is not None and source.kind == "extension":
                return FfiVal(modname)
        return Ext(self.rules.canonical(modname))

    def _absolute(self, scope: ModuleScope, module: str | None, level: int) -> str:
        if level == 0:
            return module or ""
        parts = scope.name.split(".")
        if not scope.is_package:
            parts = parts[:-1]
        if level > 1:
            parts = parts[: len(parts) - (level - 1)]
        return ".".join([*parts, *([module] if module else [])])

    def module_attr(self, scope: ModuleScope, name: str) -> Value:
        if name in scope.bindings:
            return self.resolve_global(scope, name)
        if self.index.find(f"{scope.name}.{name}") is not None:
            return self.module_value(f"{scope.name}.{name}")
        for star in scope.star_imports:
            target = self.module_value(self._absolute(scope, star.module, star.level))
            if isinstance(target, ModVal) and target.scope is not scope and name in target.scope.bindings:
                return self.resolve_global(target.scope, name)
        return UNKNOWN

    def resolve_global(self, scope: ModuleScope, name: str) -> Value:
        if name in scope.resolved:
            return scope.resolved[name]
        if name in scope.resolving:
            return UNKNOWN
        scope.resolving.add(name)
        try:
            value = self._resolve_binding(scope, name)
        finally:
            scope.resolving.discard(name)
        scope.resolved[name] = value
        return value

    def _resolve_binding(self, scope: ModuleScope, name: str) -> Value:
        kind, node, alias = scope.bindings[name]
        if kind == "def":
            if isinstance(node, ast.ClassDef):
                return ClassVal(scope, node)
            assert isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef))
            return FuncVal(scope, node)
        if kind == "import":
            assert alias is not None
            return self.module_value(alias.name if alias.asname else alias.name.split(".")[0])
        if kind == "from":
            assert isinstance(node, ast.ImportFrom) and alias is not None
            return self.import_from(scope, node, alias.name)
        assert isinstance(node, (ast.Assign, ast.AnnAssign))
        ctx = self.module_ctx(scope)
        value = self.eval(node.value, ctx) if node.value is not None else UNKNOWN
        if value is UNKNOWN and isinstance(node, ast.AnnAssign):
            value = self.annotation_value(node.annotation, scope)
        return value

    def import_from(self, scope: ModuleScope, node: ast.ImportFrom, name: str) -> Value:
        base = self._absolute(scope, node.module, node.level)
        target = self.module_value(base)
        if isinstance(target, ModVal):
            if target.scope is scope:  # `from . import sub` inside a package's __init__
                full = f"{base}.{name}"
                return self.module_value(full) if self.index.find(full) is not None else UNKNOWN
            return self.module_attr(target.scope, name)
        if isinstance(target, FfiVal):
            return FfiVal(f"{base}.{name}", member=True)
        assert isinstance(target, Ext)
        return Ext(self.rules.canonical(f"{target.name}.{name}"))

    def module_ctx(self, scope: ModuleScope) -> Ctx:
        return Ctx(scope, {}, (), "<module>", (), recording=False, depth=self.max_depth)

    # ------------------------------------------------------------------ findings

    def record(self, ctx: Ctx, line: int, call: str, category: str, reason: str, callee: str = "") -> None:
        if not ctx.recording:
            return
        key = (ctx.scope.path, line, call)
        if key in self._seen:
            return
        self._seen.add(key)
        # The same callee called again in the same function (`a.resolve()`, `b.resolve()`) is the same
        # blocker with the same fixes: one finding, with every line it appears on.
        same = (ctx.scope.path, ctx.fn_id, callee or call)
        if same in self._repeats:
            self._repeats[same].append(line)
            return
        self._repeats[same] = [line]
        self._finding_fns.append(ctx.fn_id)
        self.findings.append(
            Finding(
                file=ctx.scope.path,
                line=line,
                function=ctx.function,
                call=call,
                category=category,
                chain=(*ctx.chain, ChainFrame(ctx.scope.path, line, ctx.function)),
                reason=reason,
                relpath=ctx.scope.source.relpath,
                via_cache=ctx.via_cache,
                lines=(line,),
            )
        )

    def results(self) -> list[Finding]:
        """The findings, each with every line its call appears on in its function."""
        first_line = {(path, lines[0], fn): lines for (path, fn, _callee), lines in self._repeats.items()}
        out: list[Finding] = []
        for finding, fn_id in zip(self.findings, self._finding_fns):
            lines = first_line.get((finding.file, finding.line, fn_id), [finding.line])
            out.append(replace(finding, lines=tuple(lines)))
        return out

    def record_rule(self, ctx: Ctx, line: int, call: str, rule: CallRule | Construct, callee: str = "") -> None:
        self.record(ctx, line, call, rule.category, rule.reason, callee)

    def record_construct(self, ctx: Ctx, line: int, call: str, kind: str) -> None:
        construct = self.rules.constructs.get(kind)
        if construct is not None:
            self.record_rule(ctx, line, call, construct)

    # ------------------------------------------------------------------ entry

    def walk_entry(self, fn: FuncVal) -> None:
        ctx = Ctx(fn.scope, {}, fn.closure, fn.node.name if not isinstance(fn.node, ast.Lambda) else "<lambda>",
                  (), recording=True, depth=0, owner=fn.owner, self_val=fn.bound, fn_id=id(fn.node))
        self._bind_params(fn, [], {}, ctx)
        key = self._memo_key(fn, True)
        self._active.add(key)
        try:
            self.exec_body(fn.node, ctx)
        finally:
            self._active.discard(key)
        self.functions_walked += 1

    # ------------------------------------------------------------------ statements

    def exec_body(self, node: FunctionNode, ctx: Ctx) -> None:
        if isinstance(node, ast.Lambda):
            ctx.returns.append(self.eval(node.body, ctx))
        else:
            self.exec_block(node.body, ctx)

    def exec_block(self, body: list[ast.stmt], ctx: Ctx) -> None:
        # A guard clause (`if cond: return shortcut()`, no else) is walked after the rest of the block:
        # the shortcut is the special case (prebuilt, cached, disabled), and tracing on the main path
        # meets the fall-through statements first. Its test is still evaluated in place.
        deferred: list[ast.If] = []
        for stmt in body:
            if isinstance(stmt, ast.If) and not stmt.orelse and stmt.body and isinstance(stmt.body[-1], ast.Return):
                self.eval(stmt.test, ctx)
                deferred.append(stmt)
            else:
                self.exec_stmt(stmt, ctx)
        for stmt in deferred:
            self._branches(ctx, stmt.body, [])

    def exec_stmt(self, stmt: ast.stmt, ctx: Ctx) -> None:
        if isinstance(stmt, ast.Expr):
            self.eval(stmt.value, ctx)
        elif isinstance(stmt, ast.Assign):
            value = self.eval(stmt.value, ctx)
            for target in stmt.targets:
                self.assign(target, value, ctx)
        elif isinstance(stmt, ast.AnnAssign):
            if stmt.value is not None:
                value = self.eval(stmt.value, ctx)
                if value is UNKNOWN:
                    value = self.annotation_value(stmt.annotation, ctx.scope)
                self.assign(stmt.target, value, ctx)
        elif isinstance(stmt, ast.AugAssign):
            self.eval(stmt.value, ctx)
            self.assign(stmt.target, UNKNOWN, ctx, augmented=True)
        elif isinstance(stmt, ast.Return):
            if stmt.value is not None:
                ctx.returns.append(self.eval(stmt.value, ctx))
        elif isinstance(stmt, ast.If):
            self.eval(stmt.test, ctx)
            self._branches(ctx, stmt.body, stmt.orelse)
        elif isinstance(stmt, (ast.For, ast.AsyncFor)):
            iterable = self.eval(stmt.iter, ctx)
            self.assign(stmt.target, self._element_of(iterable), ctx)
            self._branches(ctx, stmt.body, stmt.orelse)
        elif isinstance(stmt, ast.While):
            self.eval(stmt.test, ctx)
            self._branches(ctx, stmt.body, stmt.orelse)
        elif isinstance(stmt, (ast.With, ast.AsyncWith)):
            for item in stmt.items:
                manager = self.eval(item.context_expr, ctx)
                entered = self.enter(manager, item.context_expr, ctx)
                if item.optional_vars is not None:
                    self.assign(item.optional_vars, entered, ctx)
            self.exec_block(stmt.body, ctx)
        elif isinstance(stmt, ast.Try) or type(stmt).__name__ == "TryStar":
            # Handler bodies are not walked: tracing reaches them only after traced code raised, and a
            # blocker in the try body already stops a fullgraph trace before any handler runs.
            self.exec_block(stmt.body, ctx)  # type: ignore[attr-defined]
            for handler in stmt.handlers:  # type: ignore[attr-defined]
                if handler.name:
                    ctx.env[handler.name] = UNKNOWN
            ctx.branch += 1
            self.exec_block(stmt.orelse, ctx)  # type: ignore[attr-defined]
            ctx.branch -= 1
            self.exec_block(stmt.finalbody, ctx)  # type: ignore[attr-defined]
        elif isinstance(stmt, ast.Raise):
            if stmt.exc is not None:
                self.eval(stmt.exc, ctx)
        elif isinstance(stmt, ast.Assert):
            self.eval(stmt.test, ctx)
        elif isinstance(stmt, ast.Delete):
            for target in stmt.targets:
                if isinstance(target, ast.Subscript):
                    self._store_subscript(target, ctx, "__delitem__", "del " + _text(target))
        elif isinstance(stmt, (ast.FunctionDef, ast.AsyncFunctionDef)):
            # decorators and defaults run when the def statement runs, i.e. inside the traced code
            for decorator in stmt.decorator_list:
                self.eval(decorator, ctx)
            for default in [*stmt.args.defaults, *(d for d in stmt.args.kw_defaults if d is not None)]:
                self.eval(default, ctx)
            self.bind(stmt.name, FuncVal(ctx.scope, stmt, closure=(ctx.env, *ctx.closure)), ctx)
        elif isinstance(stmt, ast.ClassDef):
            self.record_construct(ctx, stmt.lineno, f"class {stmt.name}", "class-statement")
            self.bind(stmt.name, ClassVal(ctx.scope, stmt), ctx)
        elif isinstance(stmt, ast.Import):
            for alias in stmt.names:
                name = alias.name if alias.asname else alias.name.split(".")[0]
                self.bind(alias.asname or name, self.module_value(name), ctx)
        elif isinstance(stmt, ast.ImportFrom):
            for alias in stmt.names:
                if alias.name != "*":
                    self.bind(alias.asname or alias.name, self.import_from(ctx.scope, stmt, alias.name), ctx)
        elif type(stmt).__name__ == "Match":
            self.eval(stmt.subject, ctx)  # type: ignore[attr-defined]
            ctx.branch += 1
            for case in stmt.cases:  # type: ignore[attr-defined]
                if case.guard is not None:
                    self.eval(case.guard, ctx)
                self.exec_block(case.body, ctx)
            ctx.branch -= 1

    def _branches(self, ctx: Ctx, body: list[ast.stmt], orelse: list[ast.stmt]) -> None:
        ctx.branch += 1
        self.exec_block(body, ctx)
        self.exec_block(orelse, ctx)
        ctx.branch -= 1

    def _element_of(self, iterable: Value) -> Value:
        if isinstance(iterable, NsVal):
            return union(iterable.attrs.values())
        return UNKNOWN

    def bind(self, name: str, value: Value, ctx: Ctx) -> None:
        if ctx.branch and name in ctx.env:
            value = union((ctx.env[name], value))
        ctx.env[name] = value

    def assign(self, target: ast.expr, value: Value, ctx: Ctx, augmented: bool = False) -> None:
        if isinstance(target, ast.Name):
            if not augmented:
                self.bind(target.id, value, ctx)
        elif isinstance(target, (ast.Tuple, ast.List)):
            for element in target.elts:
                self.assign(element, UNKNOWN, ctx)
        elif isinstance(target, ast.Starred):
            self.assign(target.value, UNKNOWN, ctx)
        elif isinstance(target, ast.Attribute):
            owner = self.eval(target.value, ctx)
            if isinstance(owner, ModVal) or (isinstance(owner, Ext) and owner.kind == "ref" and self._is_module_name(owner.name)):
                self.record_construct(ctx, target.lineno, _text(target, " = ..."), "module-setattr")
        elif isinstance(target, ast.Subscript):
            self._store_subscript(target, ctx, "__setitem__", _text(target, " = ..."))

    def _is_module_name(self, dotted: str) -> bool:
        last = dotted.rsplit(".", 1)[-1]
        return dotted.split(".")[0] in self.index._stdlib and last.islower() and "." not in dotted

    def _store_subscript(self, target: ast.Subscript, ctx: Ctx, method: str, text: str) -> None:
        owner = self.eval(target.value, ctx)
        self.eval(target.slice, ctx)
        if isinstance(owner, Ext):
            rule = self.rules.match(f"{owner.name}.{method}")
            if rule is not None:
                self.record_rule(ctx, target.lineno, text, rule)

    def enter(self, manager: Value, expr: ast.expr, ctx: Ctx) -> Value:
        """`with manager:` — run __enter__ on an internal object, or match `Class.__enter__` for an external one."""
        results: list[Value] = []
        for option in manager.options if isinstance(manager, UnionVal) else (manager,):
            if isinstance(option, InstVal):
                method = self.class_attr(option.cls, "__enter__", option, ctx, expr)
                results.append(self.invoke(method, [], {}, ctx, expr.lineno, _text(expr, ".__enter__"), expr))
            elif isinstance(option, Ext) and option.kind == "instance" and not option.flagged:
                rule = self.rules.match(f"{option.name}.__enter__")
                if rule is not None:
                    self.record_rule(ctx, expr.lineno, "with " + _text(expr), rule)
                results.append(option)
        return union(results)

    # ------------------------------------------------------------------ expressions

    def lookup(self, name: str, ctx: Ctx) -> Value:
        if name in ctx.env:
            return ctx.env[name]
        for env in ctx.closure:
            if name in env:
                return env[name]
        if name in ctx.scope.bindings:
            return self.resolve_global(ctx.scope, name)
        if name in _BUILTIN_NAMES:
            return Ext(name)
        for star in ctx.scope.star_imports:
            target = self.module_value(self._absolute(ctx.scope, star.module, star.level))
            if isinstance(target, ModVal) and target.scope is not ctx.scope and name in target.scope.bindings:
                return self.resolve_global(target.scope, name)
        return UNKNOWN

    def eval(self, node: ast.expr | None, ctx: Ctx) -> Value:
        if node is None:
            return UNKNOWN
        if isinstance(node, ast.Name):
            return self.lookup(node.id, ctx)
        if isinstance(node, ast.Attribute):
            return self.get_attr(self.eval(node.value, ctx), node.attr, ctx, node)
        if isinstance(node, ast.Call):
            return self.eval_call(node, ctx)
        if isinstance(node, ast.Constant):
            return UNKNOWN
        if isinstance(node, ast.BinOp):
            left = self.eval(node.left, ctx)
            self.eval(node.right, ctx)
            if isinstance(node.op, ast.Div) and isinstance(left, Ext) and left.kind == "instance":
                returned = self.rules.returns.get(f"{left.name}.__truediv__")
                if returned:
                    return Ext(returned, "instance")
            return UNKNOWN
        if isinstance(node, ast.BoolOp):
            return union([self.eval(v, ctx) for v in node.values])
        if isinstance(node, ast.UnaryOp):
            self.eval(node.operand, ctx)
            return UNKNOWN
        if isinstance(node, ast.Compare):
            self.eval(node.left, ctx)
            for comparator in node.comparators:
                self.eval(comparator, ctx)
            return UNKNOWN
        if isinstance(node, ast.IfExp):
            self.eval(node.test, ctx)
            return union((self.eval(node.body, ctx), self.eval(node.orelse, ctx)))
        if isinstance(node, ast.Dict):
            attrs: dict[str, Value] = {}
            for i, (key, value) in enumerate(zip(node.keys, node.values)):
                if key is not None:
                    self.eval(key, ctx)
                evaluated = self.eval(value, ctx)
                if key is None and isinstance(evaluated, NsVal):
                    attrs.update(evaluated.attrs)
                elif isinstance(key, ast.Constant) and isinstance(key.value, str):
                    attrs[key.value] = evaluated
                else:
                    attrs[f"<{i}>"] = evaluated
            return NsVal(attrs)
        if isinstance(node, (ast.List, ast.Tuple, ast.Set)):
            for element in node.elts:
                self.eval(element, ctx)
            return UNKNOWN
        if isinstance(node, (ast.ListComp, ast.SetComp, ast.GeneratorExp, ast.DictComp)):
            for generator in node.generators:
                self.assign(generator.target, self._element_of(self.eval(generator.iter, ctx)), ctx)
                for condition in generator.ifs:
                    self.eval(condition, ctx)
            if isinstance(node, ast.DictComp):
                self.eval(node.key, ctx)
                self.eval(node.value, ctx)
            else:
                self.eval(node.elt, ctx)
            return UNKNOWN
        if isinstance(node, ast.JoinedStr):
            for value in node.values:
                self.eval(value, ctx)
            return UNKNOWN
        if isinstance(node, ast.FormattedValue):
            self.eval(node.value, ctx)
            self.eval(node.format_spec, ctx)
            return UNKNOWN
        if isinstance(node, ast.Subscript):
            container = self.eval(node.value, ctx)
            self.eval(node.slice, ctx)
            if isinstance(container, NsVal):
                key = node.slice
                if isinstance(key, ast.Constant) and isinstance(key.value, str) and key.value in container.attrs:
                    return container.attrs[key.value]
                return union(container.attrs.values())
            return UNKNOWN
        if isinstance(node, ast.Starred):
            return self.eval(node.value, ctx)
        if isinstance(node, ast.NamedExpr):
            named = self.eval(node.value, ctx)
            self.assign(node.target, named, ctx)
            return named
        if isinstance(node, ast.Lambda):
            return FuncVal(ctx.scope, node, closure=(ctx.env, *ctx.closure))
        if isinstance(node, (ast.Await, ast.Yield, ast.YieldFrom)):
            self.eval(node.value, ctx)
            return UNKNOWN
        if isinstance(node, ast.Slice):
            self.eval(node.lower, ctx)
            self.eval(node.upper, ctx)
            self.eval(node.step, ctx)
        return UNKNOWN

    def get_attr(self, value: Value, attr: str, ctx: Ctx, node: ast.AST) -> Value:
        if isinstance(value, UnionVal):
            return union([self.get_attr(option, attr, ctx, node) for option in value.options])
        if isinstance(value, ModVal):
            return self.module_attr(value.scope, attr)
        if isinstance(value, Ext):
            if value.kind == "ref":
                return Ext(self.rules.canonical(f"{value.name}.{attr}"))
            if value.kind == "instance":
                return Ext(f"{value.name}.{attr}", "member")
            # a member read without a call is a property: follow its known type
            returned = self.rules.returns.get(value.name)
            if returned:
                return self.get_attr(Ext(returned, "instance"), attr, ctx, node)
            return UnknownMember(attr)
        if isinstance(value, InstVal):
            return self.class_attr(value.cls, attr, value, ctx, node)
        if isinstance(value, ClassVal):
            return self.class_attr(value, attr, None, ctx, node)
        if isinstance(value, SuperVal):
            return self.class_attr(value.cls, attr, value.inst, ctx, node, skip_first=True)
        if isinstance(value, NsVal):
            if attr in value.attrs:
                return value.attrs[attr]
            if attr in ("get", "pop", "setdefault", "values", "items", "__getitem__"):
                return NsMethod(value, attr)
            return UNKNOWN
        if isinstance(value, FfiVal):
            return FfiVal(f"{value.origin}.{attr}", member=True)
        return UnknownMember(attr)

    # ------------------------------------------------------------------ classes

    def class_info(self, cls: ClassVal) -> ClassInfo:
        info = self._classes.get(id(cls.node))
        if info is None:
            methods: dict[str, ast.FunctionDef | ast.AsyncFunctionDef] = {}
            assigns: dict[str, ast.expr] = {}
            annotations: dict[str, ast.expr] = {}
            self_assigns: dict[str, list[tuple[ast.FunctionDef | ast.AsyncFunctionDef, ast.expr]]] = {}
            for stmt in cls.node.body:
                if isinstance(stmt, (ast.FunctionDef, ast.AsyncFunctionDef)):
                    methods[stmt.name] = stmt
                    self._collect_self_assigns(stmt, self_assigns)
                elif isinstance(stmt, ast.Assign):
                    for target in stmt.targets:
                        if isinstance(target, ast.Name):
                            assigns[target.id] = stmt.value
                elif isinstance(stmt, ast.AnnAssign) and isinstance(stmt.target, ast.Name):
                    annotations[stmt.target.id] = stmt.annotation
                    if stmt.value is not None:
                        assigns[stmt.target.id] = stmt.value
            info = ClassInfo(methods, assigns, annotations, self_assigns)
            self._classes[id(cls.node)] = info
        if not info.mro_done:
            info.mro_done = True
            internal: list[ClassVal] = [cls]
            external: list[str] = []
            ctx = self.module_ctx(cls.scope)
            for base_expr in cls.node.bases:
                base = self.eval(base_expr, ctx)
                if isinstance(base, ClassVal) and base.node is not cls.node:
                    base_info = self.class_info(base)
                    internal.extend(c for c in base_info.internal_mro if c not in internal)
                    external.extend(b for b in base_info.external_bases if b not in external)
                elif (
                    isinstance(base, Ext)
                    and base.kind == "ref"
                    and base.name != "object"
                    and not base.name.startswith(("typing.", "abc.", "enum.", "Generic", "Protocol"))
                ):
                    external.append(base.name)
            info.internal_mro = tuple(internal)
            info.external_bases = tuple(external)
        return info

    @staticmethod
    def _collect_self_assigns(
        method: ast.FunctionDef | ast.AsyncFunctionDef,
        out: dict[str, list[tuple[ast.FunctionDef | ast.AsyncFunctionDef, ast.expr]]],
    ) -> None:
        params = [*method.args.posonlyargs, *method.args.args]
        if not params:
            return
        self_name = params[0].arg
        for node in ast.walk(method):
            if isinstance(node, (ast.Assign, ast.AnnAssign)) and node.value is not None:
                targets = node.targets if isinstance(node, ast.Assign) else [node.target]
                for target in targets:
                    if (
                        isinstance(target, ast.Attribute)
                        and isinstance(target.value, ast.Name)
                        and target.value.id == self_name
                    ):
                        out.setdefault(target.attr, []).append((method, node.value))

    def class_attr(
        self, cls: ClassVal, attr: str, inst: Value | None, ctx: Ctx, node: ast.AST, skip_first: bool = False
    ) -> Value:
        info = self.class_info(cls)
        mro = info.internal_mro[1:] if skip_first else info.internal_mro
        for klass in mro:
            kinfo = self.class_info(klass)
            method = kinfo.methods.get(attr)
            if method is not None:
                decorators = self.decorator_names(klass.scope, method)
                if any(d in _PROPERTY_DECORATORS or d.endswith(".cached_property") for d in decorators):
                    if inst is None:
                        return UNKNOWN
                    getter = FuncVal(klass.scope, method, bound=inst, owner=klass)
                    line = _node_line(node)
                    return self.call_function(getter, [], {}, ctx, line, _text(node) if isinstance(node, ast.expr) else attr)
                if "staticmethod" in decorators:
                    return FuncVal(klass.scope, method, owner=klass)
                if "classmethod" in decorators:
                    return FuncVal(klass.scope, method, bound=klass, owner=klass)
                return FuncVal(klass.scope, method, bound=inst, owner=klass)
            if attr in kinfo.assigns:
                return self.eval(kinfo.assigns[attr], self.module_ctx(klass.scope))
            if attr in kinfo.annotations:
                return self.annotation_value(kinfo.annotations[attr], klass.scope)
        if inst is not None:
            value = self._self_attr(cls, info, attr, inst)
            if value is not UNKNOWN:
                return value
            if attr != "__getattr__" and not attr.startswith("__"):
                # a dynamic attribute: tracing runs the class's __getattr__
                hook = self.class_attr(cls, "__getattr__", inst, ctx, node)
                if isinstance(hook, FuncVal):
                    line = _node_line(node)
                    return self.call_function(hook, [UNKNOWN], {}, ctx, line, _text(node) if isinstance(node, ast.expr) else attr)
        for base in info.external_bases:
            return Ext(f"{base}.{attr}", "member" if inst is not None else "ref")
        return UnknownMember(attr)

    def _self_attr(self, cls: ClassVal, info: ClassInfo, attr: str, inst: Value) -> Value:
        key = (id(cls.node), attr)
        if key in self._self_attr_cache:
            return self._self_attr_cache[key]
        self._self_attr_cache[key] = UNKNOWN  # guards recursion through the initialiser
        values: list[Value] = []
        for klass in info.internal_mro:
            for method, expr in self.class_info(klass).self_assigns.get(attr, []):
                params = [*method.args.posonlyargs, *method.args.args]
                ctx = self.module_ctx(klass.scope)
                ctx.env[params[0].arg] = inst
                for param in params[1:]:
                    ctx.env[param.arg] = self.annotation_value(param.annotation, klass.scope)
                values.append(self.eval(expr, ctx))
        value = union(values)
        self._self_attr_cache[key] = value
        return value

    def decorator_names(self, scope: ModuleScope, node: FunctionNode) -> tuple[str, ...]:
        """Decorators as canonical dotted names (`functools.cache`, `property`, `torch.compiler.disable`)."""
        if isinstance(node, ast.Lambda):
            return ()
        cached = self._decorators.get(id(node))
        if cached is not None:
            return cached
        names: list[str] = []
        ctx = self.module_ctx(scope)
        for decorator in node.decorator_list:
            written = _decorator_name(decorator)
            head = written.split(".")[0]
            if head in ("property", "staticmethod", "classmethod") and head == written:
                names.append(written)
                continue
            target = decorator.func if isinstance(decorator, ast.Call) else decorator
            value = self.eval(target, ctx) if written else UNKNOWN
            if isinstance(value, Ext):
                names.append(value.name)
            elif written.endswith((".setter", ".getter", ".deleter")):
                names.append("property")
            else:
                names.append(written)
        result = tuple(names)
        self._decorators[id(node)] = result
        return result

    # ------------------------------------------------------------------ annotations

    def annotation_value(self, node: ast.expr | None, scope: ModuleScope) -> Value:
        if node is None:
            return UNKNOWN
        key = (id(node), scope.name)
        if key in self._ann_cache:
            return self._ann_cache[key]
        self._ann_cache[key] = UNKNOWN
        value = self._annotation(node, scope)
        self._ann_cache[key] = value
        return value

    def _annotation(self, node: ast.expr, scope: ModuleScope) -> Value:
        if isinstance(node, ast.Constant) and isinstance(node.value, str):
            try:
                parsed = ast.parse(node.value, mode="eval").body
            except SyntaxError:
                return UNKNOWN
            return self._annotation(parsed, scope)
        if isinstance(node, ast.BinOp) and isinstance(node.op, ast.BitOr):
            return union((self._annotation(node.left, scope), self._annotation(node.right, scope)))
        if isinstance(node, ast.Subscript):
            base = self.eval(node.value, self.module_ctx(scope))
            if isinstance(base, Ext) and base.name in ("typing.Optional", "typing.Union"):
                inner = node.slice
                elements = inner.elts if isinstance(inner, ast.Tuple) else [inner]
                return union([self._annotation(e, scope) for e in elements])
            return UNKNOWN
        if isinstance(node, (ast.Name, ast.Attribute)):
            value = self.eval(node, self.module_ctx(scope))
            if isinstance(value, ClassVal):
                return InstVal(value)
            if isinstance(value, Ext) and value.kind == "ref":
                last = value.name.rsplit(".", 1)[-1]
                if last[:1].isupper() and not value.name.startswith(("typing.", "collections.", "torch.")):
                    return Ext(self.rules.canonical(value.name), "instance")
        return UNKNOWN

    # ------------------------------------------------------------------ calls

    def eval_call(self, node: ast.Call, ctx: Ctx) -> Value:
        callee = self.eval(node.func, ctx)
        args = [self.eval(arg, ctx) for arg in node.args]
        kwargs: dict[str, Value] = {}
        for keyword in node.keywords:
            value = self.eval(keyword.value, ctx)
            if keyword.arg is not None:
                kwargs[keyword.arg] = value
        return self.invoke(callee, args, kwargs, ctx, _call_line(node), _text(node.func), node)

    def invoke(
        self,
        callee: Value,
        args: list[Value],
        kwargs: dict[str, Value],
        ctx: Ctx,
        line: int,
        text: str,
        node: ast.AST,
    ) -> Value:
        if isinstance(callee, UnionVal):
            return union([self.invoke(option, args, kwargs, ctx, line, text, node) for option in callee.options])
        if isinstance(callee, FuncVal):
            return self.call_function(callee, args, kwargs, ctx, line, text)
        if isinstance(callee, ClassVal):
            return self.instantiate(callee, args, kwargs, ctx, line, text, node)
        if isinstance(callee, InstVal):
            method = self.class_attr(callee.cls, "__call__", callee, ctx, node)
            if isinstance(method, FuncVal):
                return self.call_function(method, args, kwargs, ctx, line, text)
            return UNKNOWN
        if isinstance(callee, Ext):
            return self.call_external(callee, args, kwargs, ctx, line, text, node)
        if isinstance(callee, FfiVal):
            if callee.member:
                self.record_construct(ctx, line, text, "ffi-call")
            return UNKNOWN
        if isinstance(callee, UnknownMember):
            rule = self.rules.match_unknown_method(callee.attr)
            if rule is not None:
                self.record_rule(ctx, line, text, rule)
            return UNKNOWN
        if isinstance(callee, NsMethod):
            if callee.name in ("get", "pop", "setdefault", "__getitem__"):
                return union(callee.ns.attrs.values())
            return UNKNOWN
        return UNKNOWN

    def call_external(
        self, callee: Ext, args: list[Value], kwargs: dict[str, Value], ctx: Ctx, line: int, text: str, node: ast.AST
    ) -> Value:
        name = callee.name
        if callee.kind == "instance":
            name = f"{name}.__call__"
        if name == "super" and ctx.owner is not None and ctx.self_val is not None:
            return SuperVal(ctx.owner, ctx.self_val)
        if name == "getattr" and isinstance(node, ast.Call) and len(node.args) >= 2:
            attr = node.args[1]
            if isinstance(attr, ast.Constant) and isinstance(attr.value, str):
                return self.get_attr(args[0], attr.value, ctx, node)
            return UNKNOWN
        if name == "dict":
            return NsVal(dict(kwargs))
        if name == "functools.partial" and args:
            return args[0]
        rule = self.rules.match(name)
        returned = self.rules.returns.get(name, "")
        if rule is not None:
            self.record_rule(ctx, line, text, rule, callee=name)
            returned = rule.returns or returned
            if returned == "namespace":
                return NsVal(dict(kwargs))
            if returned == "ffi":
                return FfiVal(name)
        if returned and returned not in ("namespace", "ffi"):
            return Ext(returned, "instance", flagged=rule is not None and ctx.recording)
        last = name.rsplit(".", 1)[-1]
        if callee.kind == "ref" and last[:1].isupper():
            return Ext(name, "instance", flagged=rule is not None and ctx.recording)
        return UNKNOWN

    def instantiate(
        self, cls: ClassVal, args: list[Value], kwargs: dict[str, Value], ctx: Ctx, line: int, text: str, node: ast.AST
    ) -> Value:
        info = self.class_info(cls)
        for base in info.external_bases:
            rule = self.rules.match(base)
            if rule is not None:
                self.record_rule(ctx, line, text, rule)
                break
        inst = InstVal(cls)
        for hook in ("__init__", "__post_init__"):
            method = self.class_attr(cls, hook, inst, ctx, node)
            if isinstance(method, FuncVal):
                self.call_function(method, args if hook == "__init__" else [], kwargs if hook == "__init__" else {}, ctx, line, text)
        return inst

    def _memo_key(self, fn: FuncVal, recording: bool) -> object:
        bound = fn.bound
        bound_key = _vkey(bound) if bound is not None else None
        return (id(fn.node), bound_key, recording)

    def call_function(
        self, fn: FuncVal, args: list[Value], kwargs: dict[str, Value], ctx: Ctx, line: int, text: str
    ) -> Value:
        effects = [self.rules.decorator(name) for name in self.decorator_names(fn.scope, fn.node)]
        returns_annotation = None if isinstance(fn.node, ast.Lambda) else fn.node.returns
        if any(e is not None and e.effect == "disabled" for e in effects):
            self.record_construct(ctx, line, text, "disabled-call")
            return self.annotation_value(returns_annotation, fn.scope)
        if any(e is not None and e.effect == "opaque" for e in effects):
            return self.annotation_value(returns_annotation, fn.scope)
        limit = self.max_depth if ctx.recording else _NON_RECORDING_DEPTH
        if ctx.depth + 1 > limit:
            if ctx.recording:
                self.truncated = True
            return self.annotation_value(returns_annotation, fn.scope)
        key = self._memo_key(fn, ctx.recording)
        if key in self._memo:
            return self._memo[key]
        if key in self._active:
            return self.annotation_value(returns_annotation, fn.scope)
        name = "<lambda>" if isinstance(fn.node, ast.Lambda) else fn.node.name
        inner = Ctx(
            scope=fn.scope,
            env={},
            closure=fn.closure,
            function=name,
            chain=(*ctx.chain, ChainFrame(ctx.scope.path, line, ctx.function)) if ctx.recording else (),
            recording=ctx.recording,
            depth=ctx.depth + 1,
            owner=fn.owner,
            self_val=fn.bound,
            via_cache=ctx.via_cache or any(e is not None and e.cache for e in effects),
            fn_id=id(fn.node),
        )
        self._bind_params(fn, args, kwargs, inner)
        self._active.add(key)
        try:
            self.exec_body(fn.node, inner)
        finally:
            self._active.discard(key)
        self.functions_walked += 1
        result = union(inner.returns)
        if result is UNKNOWN:
            result = self.annotation_value(returns_annotation, fn.scope)
        self._memo[key] = result
        return result

    def _bind_params(self, fn: FuncVal, args: list[Value], kwargs: dict[str, Value], ctx: Ctx) -> None:
        spec = fn.node.args
        positional = [*spec.posonlyargs, *spec.args]
        values = list(args)
        if fn.bound is not None and positional:
            values.insert(0, fn.bound)
        for i, param in enumerate(positional):
            value = values[i] if i < len(values) else kwargs.get(param.arg, UNKNOWN)
            if value is UNKNOWN and param.annotation is not None:
                value = self.annotation_value(param.annotation, fn.scope)
            ctx.env[param.arg] = value
        for param in spec.kwonlyargs:
            value = kwargs.get(param.arg, UNKNOWN)
            if value is UNKNOWN and param.annotation is not None:
                value = self.annotation_value(param.annotation, fn.scope)
            ctx.env[param.arg] = value
        if spec.vararg is not None:
            ctx.env[spec.vararg.arg] = UNKNOWN
        if spec.kwarg is not None:
            ctx.env[spec.kwarg.arg] = UNKNOWN
