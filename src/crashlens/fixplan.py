"""A diagnosis in, a patch plan out: which files change and how (the code comes from signatures/patches)."""

from __future__ import annotations

import ast
import os
import re
import string
import sys
from pathlib import Path

from ._struct import dataclass
from .catalog import builtin_dir
from .culprit import entry_of, source_root, is_changeable, is_stdlib, is_torch, module_of, package_of, pick_culprit
from .errors import UserError
from .records import Diagnosis, Frame

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any

# The fix kinds, best first when several could be made for one crash.
KINDS = ("register-fake", "fix-fake", "custom-op", "assume-constant", "move-import", "move-to-module", "move-to-init",
         "plain-tensor", "where", "guard", "region-op", "disable")
# Exceptions that dynamo raises itself: anything else was raised by the program (it fails in eager too).
_COMPILE_ERRORS = ("torch._dynamo.exc.", "torch._inductor.exc.", "torch._subclasses.fake_tensor.",
                   "torch._dynamo.", "torch.fx.experimental.symbolic_shapes.", "torchdynamo.", "torchinductor.")
# A signature tagged so in signatures/ is a failure of the program's own (an exception its code raises): eager
# fails the same way, and `crashlens fix` leaves the program untouched.
PROGRAM_RAISES = "program-raises"
# A signature tagged so is a failure of torch.compile's own machinery (dynamo's internal assertion): whatever the
# exception's type, the program did not raise it.
INTERNAL = "internal"
# The signature of a custom op whose registered fake gives other outputs than its real kernel.
WRONG_FAKE = "fake-impl-wrong-metadata"
_OP_NAME = re.compile(r"^([A-Za-z_]\w*)\.([A-Za-z_]\w*)(?:\.(\w+))?$")


@dataclass(frozen=True, slots=True)
class FileEdit:
    path: str  # absolute
    before: str | None  # None: the plan creates the file (a shim)
    after: str


@dataclass(frozen=True, slots=True)
class Plan:
    kind: str
    title: str
    notes: tuple[str, ...]
    edits: tuple[FileEdit, ...]
    key: str  # the same fix of the same call gets the same key (applying twice is a no-op)
    diagnosis: str  # the diagnosis id
    signature: str | None


@dataclass(frozen=True, slots=True)
class NoPlan:
    """No mechanical fix: a person has to decide (the diagnosis's ranked advice says what to try)."""

    reason: str
    eager_too: bool = False


# --- templates ----------------------------------------------------------------------------------


def _load_toml(path: Path) -> dict[str, Any]:
    if sys.version_info >= (3, 11):
        import tomllib
    else:  # pragma: no cover
        import tomli as tomllib
    with open(path, "rb") as fh:
        data: dict[str, Any] = tomllib.load(fh)
    return data


_TEMPLATES: list[dict[str, Any]] = []
_SHAPES: list[dict[str, Any]] = []
_CONSTANTS: list[dict[str, Any]] = []
_CLOCKS: list[dict[str, Any]] = []
_STATE: list[dict[str, Any]] = []


def _patches_dir() -> Path:
    return builtin_dir() / "patches"


def templates() -> list[dict[str, Any]]:
    if not _TEMPLATES:
        _TEMPLATES.extend(_load_toml(_patches_dir() / "templates.toml")["template"])
    return _TEMPLATES


def shape_rules() -> list[dict[str, Any]]:
    if not _SHAPES:
        _SHAPES.extend(_load_toml(_patches_dir() / "shapes.toml").get("rule", []))
    return _SHAPES


def process_constants() -> list[dict[str, Any]]:
    """signatures/patches/constants.toml: calls whose result is fixed for the life of the process."""
    if not _CONSTANTS:
        _CONSTANTS.extend(_load_toml(_patches_dir() / "constants.toml").get("constant", []))
    return _CONSTANTS


def process_state() -> list[dict[str, Any]]:
    """signatures/patches/state.toml: calls that change state of the process that later code reads."""
    if not _STATE:
        _STATE.extend(_load_toml(_patches_dir() / "state.toml").get("state", []))
    return _STATE


def version_tuple(v: str | None) -> tuple[int, ...]:
    if not v:
        return ()
    out = []
    for part in re.split(r"[.+]", v)[:3]:
        m = re.match(r"\d+", part)
        if not m:
            break
        out.append(int(m.group()))
    return tuple(out)


def template(kind: str, torch_version: tuple[int, ...]) -> str | None:
    """The text of `kind` written for this torch release, or None when that fix is not made there."""
    best: tuple[tuple[int, ...], str] | None = None
    for t in templates():
        if t["kind"] != kind:
            continue
        lo = version_tuple(t["torch"])
        hi = version_tuple(t.get("until"))
        tv = torch_version or (99,)
        if tv >= lo and (not hi or tv < hi) and (best is None or lo > best[0]):
            best = (lo, t["text"].strip("\n"))
    return best[1] if best else None


def fill(text: str, **values: str) -> str:
    return string.Template(text).substitute(values)


# --- finding the code to change -----------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class Located:
    path: str
    line: int
    moved: str | None = None  # "the installed version differs: ..." when the line moved


class Locator:
    """Finds a frame's file here: the log's path, the same path under the current directory or a
    --root, or the same module on a search path (read as files, never imported)."""

    def __init__(self, roots: list[str] | None = None, search_path: list[str] | None = None) -> None:
        self.roots = [os.path.abspath(r) for r in (roots or [])]
        self.search_path = [p for p in (search_path if search_path is not None else sys.path) if p]

    def find_file(self, path: str) -> str | None:
        p = path.replace("\\", "/")
        cwd = os.getcwd()
        if os.path.isfile(p) and _inside(p, [cwd, *self.roots]):
            return os.path.abspath(p)
        parts = [x for x in p.split("/") if x]
        for base in [*self.roots, cwd]:
            for k in range(len(parts) - 1, 0, -1):
                cand = os.path.join(base, *parts[-k:])
                if os.path.isfile(cand):
                    return os.path.abspath(cand)
        mod = module_of(p)
        if mod:
            rel = mod.replace(".", "/")
            for base in [*self.roots, *self.search_path]:
                for cand in (os.path.join(base, rel + ".py"), os.path.join(base, rel, "__init__.py")):
                    if os.path.isfile(cand):
                        return os.path.abspath(cand)
        if os.path.isfile(p):
            return os.path.abspath(p)
        return None

    def locate(self, frame: Frame) -> Located:
        path = self.find_file(frame.file)
        if path is None:
            raise PlanError(f"{frame.file}: not found here (give --root DIR or --site-packages DIR)")
        lines = _read(path).splitlines()
        want = _norm(frame.source)
        if not want:
            return Located(path, frame.line)
        if 0 < frame.line <= len(lines) and _norm(lines[frame.line - 1]) == want:
            return Located(path, frame.line)
        hits = [i + 1 for i, text in enumerate(lines) if _norm(text) == want]
        if len(hits) >= 1:
            best = min(hits, key=lambda n: abs(n - frame.line))
            return Located(path, best, f"the installed version differs: `{frame.function}` line {frame.line} "
                                       f"is now at {path}:{best}")
        where = _find_def(lines, frame.function)
        now = f"; `{frame.function}` is now at {path}:{where}" if where else ""
        raise PlanError(f"the installed version differs: {path}:{frame.line} no longer reads "
                        f"`{frame.source}`{now}")


class PlanError(Exception):
    """A plan cannot be made (the reason is for a person)."""


def _inside(path: str, dirs: list[str]) -> bool:
    p = os.path.abspath(path)
    return any(p.startswith(os.path.abspath(d).rstrip(os.sep) + os.sep) for d in dirs)


def _norm(s: str | None) -> str:
    return " ".join((s or "").split())


def _find_def(lines: list[str], name: str) -> int | None:
    pat = re.compile(rf"^\s*(?:async\s+)?def\s+{re.escape(name)}\s*\(")
    for i, text in enumerate(lines):
        if pat.match(text):
            return i + 1
    return None


_FILES: dict[str, str] = {}


def _read(path: str) -> str:
    if path not in _FILES:
        with open(path, encoding="utf-8", newline="") as fh:
            _FILES[path] = fh.read()
    return _FILES[path]


def forget_files() -> None:
    _FILES.clear()


# --- the planner ---------------------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class Situation:
    """What the planner reads off a diagnosis: the frames that matter, found here."""

    diagnosis: Diagnosis
    chain: tuple[Frame, ...]  # changeable frames, outermost first
    culprit: Frame | None
    entry: Frame | None  # the outermost frame of the culprit's package
    caller: Frame | None  # the user frame that calls the entry (the call site)
    torch: tuple[int, ...]
    fullgraph: bool | None


def eager_too(d: Diagnosis) -> bool:
    """A failure the program has without torch.compile too: its headline exception is the program's own."""
    tags = _signature_tags(d.signature) if d.signature is not None else ()
    if PROGRAM_RAISES in tags:
        return True
    if INTERNAL in tags:
        return False  # a plain exception (an AssertionError) raised by dynamo's own machinery, not the program's
    if d.exception is None:
        return False
    etype = d.exception[0]
    if not etype:
        return False
    return not etype.startswith(_COMPILE_ERRORS)


def _signature_tags(sig_id: str) -> tuple[str, ...]:
    from .catalog import get_catalog

    sig = next((s for s in get_catalog().signatures if s.id == sig_id), None)
    return sig.tags if sig is not None else ()


def plan_fix(d: Diagnosis, loc: Locator, torch_version: str | None = None) -> Plan | NoPlan:
    """The top mechanical fix for one diagnosis, or why there is none."""
    if not d.fatal:
        return NoPlan("not a fatal crash: nothing to fix")
    if eager_too(d):
        etype = d.exception[0] if d.exception else "the exception"
        if etype.startswith(_COMPILE_ERRORS):
            # dynamo's report of an exception it saw the traced code raise (`Observed exception`: a next()
            # without default on an empty iterator, zip(strict=True) over unequal lengths)
            what = f"{etype}: {d.exception[1]}" if d.exception and d.exception[1] else etype
            return NoPlan(f"the traced code raises an exception of its own (dynamo reports it as `{what}`): it "
                          "fails without torch.compile too (a bug in the program, left untouched): fix your code "
                          "(the advice below)", eager_too=True)
        return NoPlan(f"{etype} is raised by the program itself: it fails without torch.compile too "
                      "(a bug in the program, left untouched)", eager_too=True)
    versions = dict(d.context.versions)
    tv = version_tuple(torch_version or versions.get("torch")) or (2, 13)
    full = [f for f in _dedup(d.chain) if is_changeable(f)]
    chain = tuple(f for f in full if not _generated(f))
    culprit = d.culprit or pick_culprit(chain)
    if culprit is not None and _generated(culprit):
        # code made at run time (a dataclass's __init__, a namedtuple, exec) has no file to change: the
        # line that called into it is where the program can be changed
        at = next((i for i, f in enumerate(full) if f is culprit or (f.file, f.line) == (culprit.file, culprit.line)),
                  len(full))
        made_at = culprit.file
        culprit = next((f for f in reversed(full[:at]) if not _generated(f)), None)
        if culprit is None and d.signature != WRONG_FAKE:  # that one is fixed where the op is, not at a line
            return NoPlan(f"the crash is in code compiled from a string ({made_at}: `python -c`, exec), and no "
                          "file on the way to it can be changed")
    entry, caller = entry_of(chain, culprit) if culprit else (None, None)
    s = Situation(d, chain, culprit, entry, caller, tv, d.context.fullgraph)
    reasons: list[str] = []
    for kind in _order(d, library=caller is not None):
        try:
            plan = _PLANNERS[kind](s, loc)
        except PlanError as e:
            reasons.append(f"{kind}: {e}")
            continue
        if plan is not None:
            return plan
    why = "; ".join(reasons) if reasons else "no mechanical fix applies to this crash"
    return NoPlan(why)


def _generated(f: Frame) -> bool:
    """A frame of code compiled from a string (`File "<string>"`): no file holds its source. Inductor's output
    code (a file in its cache, `/tmp/torchinductor_<user>/...`) is written by torch.compile on every build:
    it is no program's source either."""
    return (f.file.startswith("<") and f.file.endswith(">")) or "/torchinductor_" in f.file.replace("\\", "/")


def _dedup(chain: tuple[Frame, ...]) -> list[Frame]:
    out: list[Frame] = []
    for f in chain:
        if out and out[-1].file == f.file and out[-1].line == f.line:
            continue
        if any(o.file == f.file and o.line == f.line and o.function == f.function for o in out):
            continue  # dynamo repeats the innermost frame after the traceback
        out.append(f)
    return out


def _order(d: Diagnosis, library: bool = False) -> list[str]:
    """The fix kinds to try: the diagnosis's own ranking first, then the rest in KINDS order. When the
    culprit is in a library the user's code calls, the opaque op at that call comes first: it changes the
    user's code only, and removes every blocker below the entry at once."""
    by_fix = {"custom-op": ["register-fake", "custom-op"],
              "precompute": ["assume-constant", "move-import", "move-to-module", "move-to-init", "guard"],
              "rewrite": ["plain-tensor", "where", "move-to-module", "move-to-init", "guard"], "decorate": ["disable"]}
    if d.signature == WRONG_FAKE:
        # the real kernel is right and its registered fake is not: the fake is what changes, nothing else (a
        # guard around inductor's own output check would only hide it)
        return ["register-fake"]
    out: list[str] = []
    if d.signature in ("missing-fake-impl", WRONG_FAKE):
        out.append("register-fake")
    out.append("fix-fake")  # only where the line calls a custom op of the file whose fake reads a value
    if library:
        out.append("custom-op")
    for f in d.fixes:
        for k in by_fix.get(f.kind, []):
            if k not in out and k != "register-fake":
                out.append(k)
    for k in KINDS:
        if k not in out and k != "register-fake":
            out.append(k)
    return out


# --- source helpers --------------------------------------------------------------------------------


def _parse(path: str) -> ast.Module:
    try:
        return ast.parse(_read(path), filename=path)
    except (SyntaxError, ValueError) as e:
        raise PlanError(f"{path}: cannot be parsed ({e})") from None


def _stmt_at(tree: ast.AST, line: int) -> ast.stmt | None:
    """The innermost simple statement that spans `line`."""
    best: ast.stmt | None = None
    for node in ast.walk(tree):
        if isinstance(node, ast.stmt) and node.lineno <= line <= (node.end_lineno or node.lineno):
            if best is None or node.lineno >= best.lineno and (node.end_lineno or 0) <= (best.end_lineno or 0):
                best = node
    return best


def _func_at(tree: ast.AST, line: int, name: str | None = None) -> ast.FunctionDef | ast.AsyncFunctionDef | None:
    best = None
    for node in ast.walk(tree):
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
            if node.lineno <= line <= (node.end_lineno or node.lineno) and (name is None or node.name == name):
                if best is None or node.lineno > best.lineno:
                    best = node
    return best


def _func_named(tree: ast.AST, name: str, near: int) -> ast.FunctionDef | ast.AsyncFunctionDef | None:
    found = _func_at(tree, near, name)
    if found is not None:
        return found
    cands = [n for n in ast.walk(tree) if isinstance(n, (ast.FunctionDef, ast.AsyncFunctionDef)) and n.name == name]
    return min(cands, key=lambda n: abs(n.lineno - near)) if cands else None


def _lines(text: str) -> list[str]:
    return text.splitlines(keepends=True)


def _indent_of(line: str) -> str:
    return line[: len(line) - len(line.lstrip())]


def _newline(text: str) -> str:
    return "\r\n" if "\r\n" in text else "\n"


def _insert_after_imports(text: str, new_lines: list[str], tree: ast.Module, after: int | None = None) -> str:
    """`new_lines` at module level: after the last top-level import (or line `after`), past a docstring."""
    nl = _newline(text)
    lines = _lines(text)
    at = 0
    body = tree.body
    if body and isinstance(body[0], ast.Expr) and isinstance(getattr(body[0], "value", None), ast.Constant) \
            and isinstance(body[0].value.value, str):
        at = body[0].end_lineno or 0
    for node in body:
        if isinstance(node, (ast.Import, ast.ImportFrom)):
            at = max(at, node.end_lineno or node.lineno)
        elif at and not isinstance(node, (ast.Import, ast.ImportFrom)) and node.lineno > at:
            # only the leading run of imports (a later import inside `if __name__ ...` is not it)
            if not _is_future_or_try_import(node):
                break
    if after is not None:
        at = max(at, after)
    if lines and not lines[-1].endswith(("\n", "\r")):
        lines[-1] += nl
    block = [x + nl for x in new_lines]
    return "".join(lines[:at] + block + lines[at:])


def _is_future_or_try_import(node: ast.stmt) -> bool:
    return isinstance(node, ast.Try) and all(isinstance(b, (ast.Import, ast.ImportFrom)) for b in node.body)


def _has_torch_import(tree: ast.Module) -> bool:
    for node in tree.body:
        if isinstance(node, ast.Import) and any(a.name == "torch" and a.asname is None for a in node.names):
            return True
    return False


def _module_import(path: str, shim: str) -> tuple[str, str]:
    """How the file at `path` imports its sibling module `shim`: (statement, name bound)."""
    if os.path.isfile(os.path.join(os.path.dirname(path), "__init__.py")):
        return f"from . import {shim}", shim
    return f"import {shim}", shim


def _ident(s: str) -> str:
    out = re.sub(r"\W+", "_", s).strip("_")
    return out if out and not out[0].isdigit() else f"_{out}"


# --- custom op ------------------------------------------------------------------------------------

_SCALAR = {"int": "SymInt", "float": "float", "bool": "bool", "str": "str", "torch.dtype": "ScalarType",
           "dtype": "ScalarType", "torch.device": "Device"}
_TENSOR_NAMES = ("Tensor", "torch.Tensor")


def _schema_type(ann: ast.expr | None, default: ast.expr | None) -> str | None:
    """A parameter's schema type from its annotation (or default); None: not expressible (bound)."""
    if ann is None:
        if default is None:
            return "Tensor"  # unannotated, no default: a tensor argument
        if isinstance(default, ast.Constant):
            v = default.value
            if v is None:
                return "Tensor?"
            for t, name in ((bool, "bool"), (int, "SymInt"), (float, "float"), (str, "str")):
                if isinstance(v, t):
                    return name
        return None
    text = ast.unparse(ann).replace(" ", "")
    optional = False
    for pre, post in (("Optional[", "]"), ("typing.Optional[", "]")):
        if text.startswith(pre) and text.endswith(post):
            text, optional = text[len(pre):-1], True
    if text.endswith("|None"):
        text, optional = text[:-5], True
    if text.startswith("None|"):
        text, optional = text[5:], True
    base: str | None
    if text in _TENSOR_NAMES:
        base = "Tensor"
    elif text in _SCALAR:
        base = _SCALAR[text]
    else:
        m = re.fullmatch(r"(?:typing\.)?(?:List|list|Sequence|tuple|Tuple)\[(.+?)(?:,\.\.\.)?\]", text)
        inner = m.group(1) if m else None
        if inner in _TENSOR_NAMES:
            base = "Tensor[]"
        elif inner == "int":
            base = "SymInt[]"
        elif inner == "float":
            base = "float[]"
        else:
            base = None
    if base is None:
        return None
    return base + ("?" if optional else "")


def _return_schema(fn: ast.FunctionDef | ast.AsyncFunctionDef, tree: ast.AST | None = None,
                   depth: int = 0) -> str | None:
    """"Tensor", "(Tensor, Tensor)" or "Tensor[]"; None when the function returns something else.
    Unannotated, it is read off the return statements; `return other(...)` asks `other` (same module)."""
    if fn.returns is not None:
        text = ast.unparse(fn.returns).replace(" ", "")
        if text in _TENSOR_NAMES:
            return "Tensor"
        m = re.fullmatch(r"(?:typing\.)?(?:Tuple|tuple)\[(.+)\]", text)
        if m:
            items = m.group(1).split(",")
            if items[-1] == "...":
                return "Tensor[]" if items[0] in _TENSOR_NAMES else None
            if all(i in _TENSOR_NAMES for i in items):
                return "(" + ", ".join("Tensor" for _ in items) + ")"
            return None
        m = re.fullmatch(r"(?:typing\.)?(?:List|list)\[(.+)\]", text)
        if m and m.group(1) in _TENSOR_NAMES:
            return "Tensor[]"
        return None
    arities = set()
    stdlib = _stdlib_names(tree) if tree is not None else set()
    for node in ast.walk(fn):
        if isinstance(node, ast.Return) and _owner(fn, node):
            v = node.value
            if v is None or (isinstance(v, ast.Constant)):
                return None
            if _root_name(v) in stdlib:
                return None  # json.load(f)[...], os.environ.get(...): what the standard library gives is no tensor
            if isinstance(v, (ast.Compare, ast.BoolOp, ast.JoinedStr, ast.Dict, ast.DictComp, ast.Set)):
                return None
            if isinstance(v, ast.Call) and isinstance(v.func, ast.Name) and v.func.id in (
                    "int", "float", "bool", "str", "len", "dict", "SimpleNamespace", "hash"):
                return None
            if isinstance(v, ast.Call) and tree is not None and depth < 4:
                name = _terminal(v.func)
                inner = next((n for n in ast.walk(tree) if isinstance(n, (ast.FunctionDef, ast.AsyncFunctionDef))
                              and n.name == name and n is not fn), None) if name else None
                if inner is not None:
                    sub = _return_schema(inner, tree, depth + 1)
                    if sub is None:
                        return None
                    arities.add(sub.count("Tensor") if sub.startswith("(") else (-1 if sub == "Tensor[]" else 0))
                    continue
            arities.add(len(v.elts) if isinstance(v, ast.Tuple) else 0)
    if arities == {-1}:
        return "Tensor[]"
    if len(arities) != 1 or -1 in arities:
        return None
    n = arities.pop()
    return "Tensor" if n == 0 else "(" + ", ".join("Tensor" for _ in range(n)) + ")"


def _stdlib_names(tree: ast.AST) -> set[str]:
    """The names a module binds to standard-library modules by its imports (`import json`, `import os.path`)."""
    names = getattr(sys, "stdlib_module_names", frozenset())
    out: set[str] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            for al in node.names:
                if al.name.split(".")[0] in names:
                    out.add((al.asname or al.name).split(".")[0])
    return out


def _root_name(v: ast.expr) -> str | None:
    """`json` in `json.load(f)["scales"]`: the name a chain of calls, attributes and subscripts starts from."""
    while isinstance(v, (ast.Call, ast.Attribute, ast.Subscript)):
        v = v.func if isinstance(v, ast.Call) else v.value
    return v.id if isinstance(v, ast.Name) else None


def _owner(fn: ast.AST, node: ast.AST) -> bool:
    """`node` belongs to `fn` itself, not to a function nested in it."""
    for child in ast.walk(fn):
        if child is not fn and isinstance(child, (ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda)):
            if any(n is node for n in ast.walk(child)):
                return False
    return True


def _call_on_line(tree: ast.AST, stmt: ast.stmt, line: int, name: str) -> ast.Call | None:
    calls = [n for n in ast.walk(stmt) if isinstance(n, ast.Call)]
    named = [c for c in calls if _terminal(c.func) == name]
    on_line = [c for c in named if c.lineno <= line <= (c.end_lineno or c.lineno)]
    pick = on_line or named
    if len(pick) == 1:
        return pick[0]
    if not named:
        # the callee imported under another name (`from lib import fp4_quantize as quant`): the one call
        # on the line that names neither a builtin nor a method of a value
        import builtins

        other = [c for c in calls if c.lineno <= line <= (c.end_lineno or c.lineno) and _is_plain_ref(c.func)
                 and not (isinstance(c.func, ast.Name) and hasattr(builtins, c.func.id))
                 and not isinstance(c.func, ast.Attribute)]
        if len(other) == 1:
            return other[0]
    return None


def _terminal(func: ast.expr) -> str | None:
    if isinstance(func, ast.Name):
        return func.id
    if isinstance(func, ast.Attribute):
        return func.attr
    return None


def _is_plain_ref(func: ast.expr) -> bool:
    """`f` or `a.b.f` (no self, no call, no subscript): resolvable from the module's globals."""
    node = func
    while isinstance(node, ast.Attribute):
        node = node.value
    return isinstance(node, ast.Name) and node.id not in ("self", "cls")


def _replace_span(text: str, node: ast.expr, new: str) -> str:
    lines = _lines(text)
    l0, l1 = node.lineno - 1, (node.end_lineno or node.lineno) - 1
    b0 = lines[l0].encode("utf-8")
    b1 = lines[l1].encode("utf-8")
    end_col = node.end_col_offset or 0
    if l0 == l1:
        lines[l0] = (b0[: node.col_offset] + new.encode() + b0[end_col:]).decode("utf-8")
    else:
        lines[l0] = (b0[: node.col_offset] + new.encode() + b1[end_col:]).decode("utf-8")
        del lines[l0 + 1 : l1 + 1]
    return "".join(lines)


def _callee_frames(s: Situation, loc: Locator | None = None) -> list[tuple[Frame, Frame]]:
    """(call site, callee) pairs to try, outermost first: each changeable frame of the chain and the next
    one it calls, down to the culprit. The outermost that can be made opaque removes the most blockers at
    once (the whole chain below it); wrapping deeper would leave the next blocker for the next round."""
    pairs: list[tuple[Frame, Frame]] = []
    chain = list(s.chain)
    stop = len(chain)
    if s.culprit is not None:
        for i, f in enumerate(chain):
            if f.file == s.culprit.file and f.line == s.culprit.line:
                stop = i + 1
                break
    if s.caller is not None and s.entry is not None:
        # never below a library's entry point: patching the probe, then the stat, then the lock, one
        # round each, is the loop a fix at the entry ends
        for i, f in enumerate(chain):
            if f is s.caller or (f.file == s.caller.file and f.line == s.caller.line):
                # an entry that is a method (a library nn.Module's forward) cannot be an op: the function
                # it calls, the outermost plain function of the package, is the entry to wrap
                deeper = i + 1 < len(chain) and _is_method_frame(chain[i + 1], loc)
                stop = min(stop, i + (3 if deeper else 2))
                break
    for i in range(min(stop, len(chain)) - 1):
        pairs.append((chain[i], chain[i + 1]))
    if s.caller is not None and s.entry is not None and (s.caller, s.entry) not in pairs:
        pairs.append((s.caller, s.entry))
    if len(chain) >= 1 and s.diagnosis.callee:
        # dynamo stopped at a call (a disabled or skipped function): the callee is not in the chain,
        # but when it is defined in the same file, its def is the frame to wrap
        name = s.diagnosis.callee.rsplit(".", 1)[-1]
        site = s.culprit if s.culprit is not None else chain[-1]
        try:
            text = _read(site.file)
        except OSError:
            return pairs
        where = _find_def(text.splitlines(), name)
        if where is not None and name != site.function:
            pairs.append((site, Frame(site.file, where, name, None)))
    return pairs


def _is_method_frame(f: Frame, loc: Locator | None) -> bool:
    """The frame's function takes `self` first (read from its file here; False when it cannot be read)."""
    try:
        where = loc.locate(f) if loc is not None else Located(f.file, f.line or 0)
        fn = _func_named(_parse(where.path), f.function, where.line)
    except (OSError, PlanError):
        return False
    params = [*fn.args.posonlyargs, *fn.args.args] if fn is not None else []
    return bool(params) and params[0].arg == "self"


def _first_of_pairs(s: Situation, loc: Locator, make: Any) -> Plan | None:
    errors: list[str] = []
    for pair in _callee_frames(s, loc):
        try:
            plan = make(s, loc, pair)
        except PlanError as e:
            errors.append(str(e))
            continue
        if plan is not None:
            return plan
    if errors:
        raise PlanError(errors[0])
    return None


def _plan_custom_op(s: Situation, loc: Locator) -> Plan | None:
    return _first_of_pairs(s, loc, _custom_op_for)


def _custom_op_for(s: Situation, loc: Locator, pair: tuple[Frame, Frame]) -> Plan | None:
    site_f, callee_f = pair
    site = loc.locate(site_f)
    callee = loc.locate(callee_f)
    tree = _parse(site.path)
    stmt = _stmt_at(tree, site.line)
    if stmt is None:
        raise PlanError(f"{site.path}:{site.line}: no statement there")
    call = _call_on_line(tree, stmt, site.line, callee_f.function) or _through_partial(tree, stmt, site.line,
                                                                                       callee_f.function)
    if call is None:
        raise PlanError(f"{site.path}:{site.line}: no single call of `{callee_f.function}` on that line")
    if not _is_plain_ref(call.func):
        raise PlanError(f"`{ast.unparse(call.func)}` is a method or computed callable: wrap it by hand")
    if any(isinstance(a, ast.Starred) for a in call.args) or any(k.arg is None for k in call.keywords):
        raise PlanError("the call passes *args/**kwargs")
    ctree = _parse(callee.path)
    fn = _func_named(ctree, callee_f.function, callee.line)
    if fn is None:
        raise PlanError(f"{callee.path}: no function `{callee_f.function}`")
    qualified = f"{module_of(callee_f.file, source_root(s.diagnosis.chain)) or Path(callee.path).stem}.{fn.name}"
    moved = tuple(x.moved for x in (site, callee) if x.moved)
    plan = _opaque_call(s, site.path, site.line, _read(site.path), stmt, call, fn, ctree, qualified, moved)
    if s.entry is None or s.caller is None:
        return plan
    return _with_sibling_entries(s, loc, plan, site, call, callee, callee_f, qualified)


def _with_sibling_entries(s: Situation, loc: Locator, plan: Plan, site: Located, call: ast.Call, callee: Located,
                          callee_f: Frame, qualified: str) -> Plan:
    """The library's other entry points that the site's file calls and that reach the same blocker (the same
    loader below the entry: `mxfp4_dequantize` goes through the `_load` that `mxfp4_quantize` does), made opaque
    ops in the same plan. Left alone, each would bring the chain back next round, one entry point a round."""
    below = _frames_below(s, loc, callee_f)
    if not below:
        return plan
    site_text = plan.edits[0].after or ""
    tree = ast.parse(_read(site.path))
    names = _sibling_calls(tree, call)
    done = {callee_f.function}
    shims = list(plan.edits[1:])
    notes = list(plan.notes)
    titles = [f"`{qualified}`"]
    for name in names:
        if name in done:
            continue
        done.add(name)
        found = _package_def(callee.path, name)
        if found is None:
            continue
        path, cfn, ctree = found
        if not _reaches(path, cfn, ctree, below):
            continue
        cur = ast.parse(site_text)
        ccall = next((c for c in ast.walk(cur) if isinstance(c, ast.Call) and _sibling_name(c, call) == name), None)
        if ccall is None:
            continue
        cstmt = _stmt_at(cur, ccall.lineno)
        cqual = f"{qualified.rsplit('.', 1)[0]}.{name}" if path == callee.path else \
            f"{module_of(path, source_root(s.diagnosis.chain)) or Path(path).stem}.{name}"
        try:
            if cstmt is None or not _is_plain_ref(ccall.func):
                raise PlanError(f"`{ast.unparse(ccall.func)}` is not a plain call")
            if any(isinstance(a, ast.Starred) for a in ccall.args) or any(k.arg is None for k in ccall.keywords):
                raise PlanError("the call passes *args/**kwargs")
            more = _opaque_call(s, site.path, ccall.lineno, site_text, cstmt, ccall, cfn, ctree, cqual)
        except PlanError as e:
            notes.append(f"`{ast.unparse(ccall.func)}` at {_rel(site.path)}:{ccall.lineno} reaches the same "
                         f"blocker and could not be made an op too ({e}): the next round will stop there")
            continue
        site_text = more.edits[0].after or site_text
        shims.extend(more.edits[1:])
        first = next((c.lineno for c in sorted((c for c in ast.walk(tree) if isinstance(c, ast.Call)),
                                               key=lambda c: c.lineno) if _sibling_name(c, call) == name), ccall.lineno)
        notes.append(f"also `{ast.unparse(ccall.func)}` (first at {_rel(site.path)}:{first}): it reaches "
                     "the same blocker below the entry point, so it is an opaque op too (one round for the chain)")
        notes.extend(n for n in more.notes if n.startswith("shim: "))
        titles.append(f"`{cqual}`")
    if len(titles) == 1:
        return plan
    title = f"Make {', '.join(titles[:-1])} and {titles[-1]} opaque custom ops at {_rel(site.path)}:{site.line}"
    return Plan(plan.kind, title, tuple(notes), (FileEdit(site.path, plan.edits[0].before, site_text), *shims),
                plan.key, plan.diagnosis, plan.signature)


def _frames_below(s: Situation, loc: Locator, callee_f: Frame) -> set[tuple[str, str]]:
    """(file here, function) of the chain's frames below the entry that belong to the entry's package."""
    chain = list(s.chain)
    at = next((i for i, f in enumerate(chain) if (f.file, f.line) == (callee_f.file, callee_f.line)), None)
    if at is None:
        return set()
    root = source_root(s.diagnosis.chain)
    pkg = package_of(callee_f.file, root)
    out: set[tuple[str, str]] = set()
    for f in chain[at + 1:]:
        if pkg is None or package_of(f.file, root) != pkg:
            continue
        path = loc.find_file(f.file)
        if path is not None:
            out.add((os.path.realpath(path), f.function))
    return out


def _sibling_name(c: ast.Call, entry_call: ast.Call) -> str | None:
    """The name `c` calls when it calls through the same module as `entry_call` (`mxkern.x(...)` beside
    `mxkern.mxfp4_quantize(...)`), else None."""
    f, e = c.func, entry_call.func
    if isinstance(e, ast.Attribute) and isinstance(f, ast.Attribute) and ast.unparse(f.value) == ast.unparse(e.value):
        return f.attr
    if isinstance(e, ast.Name) and isinstance(f, ast.Name):
        return f.id
    return None


def _sibling_calls(tree: ast.Module, entry_call: ast.Call) -> list[str]:
    """Names of the other calls in the file through the entry's module (`mod.name(...)`), or, for an entry
    imported by name (`from pkg import entry`), of the names the same import binds, in the file's order."""
    allowed: set[str] | None = None
    if isinstance(entry_call.func, ast.Name):
        entry = entry_call.func.id
        imp = next((n for n in ast.walk(tree) if isinstance(n, ast.ImportFrom)
                    and any((a.asname or a.name) == entry for a in n.names)), None)
        if imp is None:
            return []
        allowed = {a.asname or a.name for a in imp.names if (a.asname or a.name) != entry}
    out: list[str] = []
    calls = sorted((c for c in ast.walk(tree) if isinstance(c, ast.Call)), key=lambda c: (c.lineno, c.col_offset))
    for c in calls:
        name = _sibling_name(c, entry_call)
        if name is None or name in out or (allowed is not None and name not in allowed):
            continue
        out.append(name)
    return out


def _package_def(entry_path: str, name: str) -> tuple[str, ast.FunctionDef, ast.Module] | None:
    """The top-level function `name` of the entry's package as the package exports it: defined in the entry's
    module, or imported into the package's `__init__.py` (`from .quant import name`)."""
    seen: set[str] = set()
    todo = [entry_path, os.path.join(os.path.dirname(entry_path), "__init__.py")]
    while todo:
        path = todo.pop(0)
        if path in seen or not os.path.isfile(path) or len(seen) > 8:
            continue
        seen.add(path)
        try:
            tree = _parse(path)
        except (OSError, PlanError):
            continue
        fn = next((n for n in tree.body if isinstance(n, ast.FunctionDef) and n.name == name), None)
        if fn is not None:
            return path, fn, tree
        for n in tree.body:
            if isinstance(n, ast.ImportFrom) and n.level >= 1 and any(a.name == name for a in n.names):
                base = os.path.dirname(path)
                for _ in range(n.level - 1):
                    base = os.path.dirname(base)
                rel = (n.module or "").replace(".", os.sep)
                todo += [os.path.join(base, rel + ".py"), os.path.join(base, rel, "__init__.py")]
    return None


def _reaches(path: str, fn: ast.FunctionDef, tree: ast.Module, targets: set[tuple[str, str]], limit: int = 40) -> bool:
    """Whether `fn` calls, through the functions of its package (its module's, and `mod.f` of a module it
    imports from the package), one of `targets` ((file, function) pairs), read statically."""
    todo: list[tuple[str, ast.FunctionDef, ast.Module]] = [(path, fn, tree)]
    seen: set[tuple[str, str]] = set()
    while todo and len(seen) < limit:
        p, f, t = todo.pop()
        key = (os.path.realpath(p), f.name)
        if key in seen:
            continue
        seen.add(key)
        if key in targets and f is not fn:
            return True
        local = {n.name: n for n in t.body if isinstance(n, ast.FunctionDef)}
        mods = {}
        for n in t.body:
            if isinstance(n, ast.ImportFrom) and n.level >= 1:
                base = os.path.dirname(p)
                for _ in range(n.level - 1):
                    base = os.path.dirname(base)
                for a in n.names:
                    sub = os.path.join(base, *(n.module or "").split("."), a.name + ".py") if n.module \
                        else os.path.join(base, a.name + ".py")
                    mods[a.asname or a.name] = sub
        for c in ast.walk(f):
            if not isinstance(c, ast.Call):
                continue
            if isinstance(c.func, ast.Name) and c.func.id in local:
                todo.append((p, local[c.func.id], t))
            elif isinstance(c.func, ast.Attribute) and isinstance(c.func.value, ast.Name) \
                    and c.func.value.id in mods and os.path.isfile(mods[c.func.value.id]):
                sub_path = mods[c.func.value.id]
                try:
                    sub_tree = _parse(sub_path)
                except PlanError:
                    continue
                g = next((n for n in sub_tree.body if isinstance(n, ast.FunctionDef) and n.name == c.func.attr), None)
                if g is not None:
                    todo.append((sub_path, g, sub_tree))
    return False


def _opaque_call(s: Situation, site_path: str, site_line: int, site_text: str, stmt: ast.stmt, call: ast.Call,
                 fn: ast.FunctionDef | ast.AsyncFunctionDef, ctree: ast.AST, qualified: str,
                 extra_notes: tuple[str, ...] = (), title: str | None = None, original: str | None = None,
                 check_values: bool = False, handle_class: str | None = None) -> Plan:
    """The call `call` (in `stmt`, at site_path:site_line) of `fn` made a call of a shim module beside the site,
    which makes `fn` an opaque custom op; `site_text` is the site's text the call is in (`original` the file's
    text on disk, when the plan changed it before). With `handle_class`, `fn`'s first parameter `self` is an
    object of that class (in the site's file): the op takes its handle (`id(self)`), the shim keeps a weak
    reference that the class's `__init__` registers, and the derived fake runs on a copy of the object."""
    ret = _return_schema(fn, ctree)
    if ret is None:
        raise PlanError(f"`{fn.name}` does not return tensors (an opaque op must)")
    unpacked = _unpacked_into(stmt, call)
    if fn.returns is None and unpacked and ret == "Tensor":
        # read off `return other(...)` of a function this module does not define: the call site, which
        # unpacks the result into that many names, says how many tensors it is
        ret = "(" + ", ".join("Tensor" for _ in range(unpacked)) + ")"
    a = fn.args
    if a.vararg or a.kwarg:
        raise PlanError(f"`{fn.name}` takes *args/**kwargs")
    params = [*a.posonlyargs, *a.args]
    defaults: list[ast.expr | None] = [None] * (len(params) - len(a.defaults)) + list(a.defaults)
    if params and params[0].arg in ("self", "cls") and not (handle_class and params[0].arg == "self"):
        raise PlanError(f"`{fn.name}` is a method")
    kwonly = list(zip(a.kwonlyargs, a.kw_defaults))
    allp = list(zip(params, defaults)) + kwonly
    # what the call site passes for each parameter
    given: dict[str, ast.expr] = {}
    for i, arg in enumerate(call.args):
        if i >= len(params):
            raise PlanError(f"the call passes more arguments than `{fn.name}` takes")
        given[params[i].arg] = arg
    for kw in call.keywords:
        given[str(kw.arg)] = kw.value
    op_params, op_names, bound, call_args, wrapper_params = [], [], [], [], []
    out_given = _out_buffers(given.get("out"))
    if out_given and fn.returns is None and ret == "Tensor" and out_given > 1:
        # `f(x, out=(a, b))`: the function writes that many tensors (and, by torch's convention, gives them back)
        ret = "(" + ", ".join("Tensor" for _ in range(out_given)) + ")"
    if handle_class:
        # the object: its handle goes through the op, the shim gives the object back (a copy in the fake)
        allp = allp[1:]
        op_params.append(("int obj", "obj", None))
        op_names.append("obj")
        bound.append("    self = _object(obj)")
        call_args.append("self")
        wrapper_params.append("self")
    for p, dflt in allp:
        if out_given and p.arg == "out" and isinstance(dflt, ast.Constant) and dflt.value is None:
            # the op computes new tensors (the library called without `out`); the shim's wrapper copies them
            # into the caller's buffers (an op may not return its inputs, nor write them undeclared)
            bound.append("    out = None")
            call_args.append("out=out")
            continue
        typ = _schema_type(p.annotation, dflt)
        g = given.get(p.arg)
        if typ is None:
            if g is not None and not _literal(g):
                raise PlanError(f"argument `{p.arg}` of `{fn.name}` is not a tensor, number, bool or string "
                                f"and the call passes `{ast.unparse(g)}`: bind it by hand")
            if g is not None:
                bound.append(f"    {p.arg} = {ast.unparse(g)}")
                call_args.append(f"{p.arg}={p.arg}")
            elif dflt is not None and _literal(dflt):
                bound.append(f"    {p.arg} = {ast.unparse(dflt)}")
            wrapper_params.append(f"{p.arg}=None" if dflt is not None or g is not None else p.arg)
            continue
        dtext = ast.unparse(dflt) if dflt is not None else None
        wrapper_default = dtext
        if dtext is not None and not _literal(dflt):
            dtext = None  # a computed default: the call site must pass it
            # ...unless it is one of torch's own constants (`dtype: torch.dtype = torch.float32`): the shim,
            # which imports torch, gives its wrapper the same default, and the op always receives it
            if not (typ in ("ScalarType", "Device") and isinstance(dflt, ast.Attribute)
                    and isinstance(dflt.value, ast.Name) and dflt.value.id == "torch"):
                wrapper_default = None
                if g is None:
                    raise PlanError(f"`{fn.name}`'s default for `{p.arg}` is computed: pass it at the call site")
        schema_p = f"{typ} {p.arg}" + (f"={_schema_default(dflt)}" if dtext is not None else "")
        op_params.append((schema_p, p.arg, dtext))
        op_names.append(p.arg)
        call_args.append(f"{p.arg}={p.arg}")
        wrapper_params.append(p.arg + (f"={wrapper_default}" if wrapper_default is not None else ""))
    # a parameter without a default may not follow one with a default in the generated defs
    seen_default = False
    for _, _, d in op_params:
        if d is not None:
            seen_default = True
        elif seen_default:
            raise PlanError(f"`{fn.name}`'s parameters cannot be passed positionally to an op")
    schema = "(" + ", ".join(p for p, _, _ in op_params) + f") -> {ret}"
    stem = _ident(Path(site_path).stem)
    op = _ident(f"{stem}_{fn.name}")
    shim = f"_crashlens_{op}"
    shim_path = os.path.join(os.path.dirname(site_path), shim + ".py")
    rule = _shape_rule(fn.name, qualified)
    if rule is not None:
        fake_body = rule["body"].rstrip("\n")
        fake_note = f"The fake gives the real output shapes and dtypes by the catalog's shape rule `{rule['id']}`."
    else:
        check = fill(_need("derived-fake-check", s.torch), qualified=qualified) if check_values else ""
        fake_body = fill(_need("derived-fake", s.torch), qualified=qualified, op_names=", ".join(op_names),
                         value_check=check, isolate=", _isolated(obj)" if handle_class else "")
        fake_note = ("The fake's shapes are DERIVED: no shape rule for this function is in the catalog, so it runs "
                     "the real function once per input shape on zero-filled tensors.")
    callee_expr = ast.unparse(call.func)
    wrapper = fn.name
    if out_given:
        wrapper = f"_new_{fn.name}"
        fake_note += (" `out=` is given at the call site: the op computes new tensors and the shim copies them into "
                      "the tensors passed as `out` (declared outputs), as the library writes them.")
    op_params_text = ", ".join(n + (f"={d}" if d is not None else "") for _, n, d in op_params)
    text = fill(
        _need("custom-op", s.torch), qualified=qualified, call_site=f"{_rel(site_path)}:{site_line}",
        signature=s.diagnosis.signature or "?", fake_note=fake_note, callee_expr=callee_expr,
        callee_repr=repr(callee_expr), op=op, schema=schema.replace('"', '\\"'), op_params=op_params_text,
        bound_indented="\n".join(bound), call_args=", ".join(call_args),
        op_names=", ".join(op_names), fake_body=fake_body, wrapper=wrapper, params=", ".join(wrapper_params),
        wrapper_args=", ".join(["id(self)", *op_names[1:]] if handle_class else op_names),
    ) + "\n"
    if out_given:
        names = [w.split("=", 1)[0] for w in wrapper_params]
        text += "\n\n" + fill(_need("out-copy", s.torch), wrapper=fn.name, params=", ".join([*wrapper_params, "out=None"]),
                              new=wrapper, new_args=", ".join(f"{n}={n}" for n in names)).strip("\n") + "\n"
    if handle_class:
        text += "\n\n" + _need("object-handle", s.torch).strip("\n") + "\n"
    # the call site: the callee expression becomes the shim's wrapper
    imp, alias = _module_import(site_path, shim)
    new_site = _replace_calls(site_text, call, fn, f"{alias}.{fn.name}")
    new_tree = ast.parse(new_site)
    add = [fill(_need("shim-import", s.torch), import_stmt=imp),
           fill(_need("shim-bind", s.torch), alias=alias, callee_expr=callee_expr)]
    new_site = _insert_after_imports(new_site, add, new_tree)
    if handle_class:
        new_site = _register_in_init(new_site, handle_class, fill(_need("object-keep", s.torch), alias=alias))
    notes = [f"call site: {_rel(site_path)}:{site_line} (`{callee_expr}(...)` becomes `{alias}.{fn.name}(...)`)",
             f"shim: {_rel(shim_path)} (crashlens::{op}, {schema})", fake_note]
    notes.extend(extra_notes)
    edits = (FileEdit(site_path, site_text if original is None else original, new_site), FileEdit(shim_path, None, text))
    return Plan("custom-op", title or f"Make `{qualified}` an opaque custom op at {_rel(site_path)}:{site_line}",
                tuple(notes), edits, f"custom-op:{site_path}:{op}", s.diagnosis.id, s.diagnosis.signature)


def _out_buffers(g: ast.expr | None) -> int:
    """How many tensors a call passes as `out=`: a tuple or list of names (2 for `out=(packed, scales)`), one
    name; 0 when it passes none or something else."""
    if isinstance(g, (ast.Tuple, ast.List)) and g.elts and all(isinstance(e, (ast.Name, ast.Attribute, ast.Subscript))
                                                             for e in g.elts):
        return len(g.elts)
    if isinstance(g, (ast.Name, ast.Attribute)):
        return 1
    return 0


def _register_in_init(text: str, cls_name: str, line: str) -> str:
    """`line` (one statement) added as the last statement of `cls_name.__init__` in `text`."""
    tree = ast.parse(text)
    cls = next((c for c in ast.walk(tree) if isinstance(c, ast.ClassDef) and c.name == cls_name), None)
    init = next((f for f in cls.body if isinstance(f, ast.FunctionDef) and f.name == "__init__"), None) \
        if cls is not None else None
    if init is None:
        raise PlanError(f"`{cls_name}` has no `__init__` to register the object in")
    lines = _lines(text)
    lastst = init.body[-1]
    end = lastst.end_lineno or lastst.lineno
    if _same_line_tail(lines[end - 1], lastst):
        raise PlanError(f"`{cls_name}.__init__` ends on a line shared with another statement")
    indent = _indent_of(lines[init.body[0].lineno - 1])
    return "".join(lines[:end] + [indent + line.strip("\n") + _newline(text)] + lines[end:])


def _through_partial(tree: ast.AST, stmt: ast.stmt, line: int, name: str) -> ast.Call | None:
    """`self.base(x)` on the line, where the file's one assignment to `self.base` is
    `functools.partial(lib.name, ...)`: dynamo went from the line straight into `name`. The call as the op
    sees it: the partial's first argument is the callee (where it is written, in the partial), the
    partial's arguments come before the line's."""
    calls = [c for c in ast.walk(stmt) if isinstance(c, ast.Call) and c.lineno <= line <= (c.end_lineno or c.lineno)
             and isinstance(c.func, (ast.Name, ast.Attribute))]
    found: list[ast.Call] = []
    for c in calls:
        held = ast.unparse(c.func)
        sets = [n for n in ast.walk(tree) if isinstance(n, (ast.Assign, ast.AnnAssign))
                and any(ast.unparse(t) == held for t in (n.targets if isinstance(n, ast.Assign) else [n.target]))]
        if len(sets) != 1 or not isinstance(sets[0].value, ast.Call):
            continue
        v = sets[0].value
        if _terminal(v.func) == "partial" and v.args and _terminal(v.args[0]) == name:
            found.append(ast.copy_location(ast.Call(func=v.args[0], args=[*v.args[1:], *c.args],
                                                    keywords=[*v.keywords, *c.keywords]), c))
    return found[0] if len(found) == 1 else None


def _replace_calls(text: str, call: ast.Call, fn: ast.FunctionDef | ast.AsyncFunctionDef, new: str) -> str:
    """`call.func` becomes `new`, and so does every other call in the file of the same callee expression
    that passes the same parameters, its non-tensor ones the same text (the shim binds those): each
    reaches the same blocker (`k_q, k_s = q8(k)` then `v_q, v_s = q8(v)`), and left alone would bring the
    crash back next round. Any other call keeps calling the library."""
    a = fn.args
    params = [*a.posonlyargs, *a.args]
    defaults: list[ast.expr | None] = [None] * (len(params) - len(a.defaults)) + list(a.defaults)
    kinds = {p.arg: _schema_type(p.annotation, d) for p, d in [*zip(params, defaults), *zip(a.kwonlyargs, a.kw_defaults)]}

    def passed(c: ast.Call) -> dict[str, str] | None:
        if len(c.args) > len(params) or any(isinstance(x, ast.Starred) for x in c.args):
            return None
        g = {params[i].arg: x for i, x in enumerate(c.args)}
        for k in c.keywords:
            if k.arg is None or k.arg not in kinds:
                return None
            g[k.arg] = k.value
        return {n: (ast.unparse(v) if kinds[n] is None else "") for n, v in g.items()}

    want, func = passed(call), ast.unparse(call.func)
    spans: list[ast.expr] = [call.func]
    for c in ast.walk(ast.parse(text)):
        if (isinstance(c, ast.Call) and ast.unparse(c.func) == func and want is not None and passed(c) == want
                and (c.func.lineno, c.func.col_offset) != (call.func.lineno, call.func.col_offset)):
            spans.append(c.func)
    for node in sorted(spans, key=lambda n: (n.lineno, n.col_offset), reverse=True):
        text = _replace_span(text, node, new)
    return text


def _unpacked_into(stmt: ast.stmt, call: ast.Call) -> int:
    """How many names the statement unpacks the call's result into (`q, s = f(x)`: 2); 0 when it does not."""
    if isinstance(stmt, ast.Assign) and stmt.value is call and len(stmt.targets) == 1:
        t = stmt.targets[0]
        if isinstance(t, (ast.Tuple, ast.List)) and not any(isinstance(e, ast.Starred) for e in t.elts):
            return len(t.elts)
    return 0


def _schema_default(d: ast.expr | None) -> str:
    if isinstance(d, ast.Constant):
        v = d.value
        if v is None:
            return "None"
        if isinstance(v, bool):
            return "True" if v else "False"
        if isinstance(v, str):
            return '"' + v.replace('"', '') + '"'
        return repr(v)
    return ast.unparse(d) if d is not None else ""


def _literal(node: ast.expr | None) -> bool:
    if node is None:
        return False
    try:
        ast.literal_eval(node)
    except (ValueError, TypeError, SyntaxError, MemoryError, RecursionError):
        return False
    return True


def _shape_rule(function: str, qualified: str) -> dict[str, Any] | None:
    module = qualified.rsplit(".", 1)[0]
    for r in shape_rules():
        if r["function"] != function:
            continue
        if any(module == suf or module.endswith("." + suf) for suf in r["module_suffix"]):
            return r
    return None


def _need(kind: str, tv: tuple[int, ...]) -> str:
    t = template(kind, tv)
    if t is None:
        raise PlanError(f"no `{kind}` template for torch {'.'.join(map(str, tv))}")
    return t


def _rel(path: str) -> str:
    try:
        r = os.path.relpath(path)
    except ValueError:
        return path
    return path if r.startswith("../../") else r


# --- register_fake ----------------------------------------------------------------------------------


def _defines_in_lib(node: ast.stmt, name: str) -> bool:
    """`lib.define("name(Tensor x) -> Tensor")` or `lib.impl("name", kernel, "CPU")` in a module-level statement
    (or a decorator `@lib.impl("name")`)."""
    for c in ast.walk(node):
        if not (isinstance(c, ast.Call) and isinstance(c.func, ast.Attribute) and c.args
                and isinstance(c.args[0], ast.Constant) and isinstance(c.args[0].value, str)):
            continue
        arg = c.args[0].value
        if c.func.attr == "define" and re.match(rf"{re.escape(name)}(?:\.\w+)?\(", arg):
            return True
        if c.func.attr == "impl" and arg.split(".")[0] == name:
            return True
    return False


def _defining_file(qual: str, loc: Locator, limit: int = 5000) -> str:
    """The one Python file of the program here (the current directory and --root, not installed packages nor
    hidden or cache folders) that defines the custom op `qual` ("ns::name" as a string literal beside a
    `custom_op(` or `define(`)."""
    found: list[str] = []
    seen = 0
    for base in dict.fromkeys([os.getcwd(), *loc.roots]):
        for dirpath, dirnames, filenames in os.walk(base):
            dirnames[:] = [x for x in dirnames if not x.startswith((".", "__pycache__")) and x != "site-packages"]
            for fn in filenames:
                if not fn.endswith(".py") or fn.startswith("_crashlens_"):
                    continue
                seen += 1
                if seen > limit:
                    raise PlanError(f"too many files here to find where `{qual}` is defined: replace its fake by hand")
                p = os.path.join(dirpath, fn)
                try:
                    with open(p, encoding="utf-8", errors="replace") as fh:
                        t = fh.read()
                except OSError:
                    continue
                if (f'"{qual}"' in t or f"'{qual}'" in t) and ("custom_op(" in t or "define(" in t):
                    found.append(p)
    if len(found) != 1:
        raise PlanError(f"{'no file' if not found else 'several files'} here define `{qual}`: replace its fake by hand")
    return found[0]


def _plan_register_fake(s: Situation, loc: Locator) -> Plan | None:
    d = s.diagnosis
    m = _OP_NAME.match(d.callee or "")
    if m is None:
        raise PlanError("the log does not name the custom op")
    ns, name = m.group(1), m.group(2)
    if ns in ("aten", "prim", "prims"):
        return None
    wrong = d.signature == WRONG_FAKE  # a fake is registered, and gives other outputs than the real kernel
    if not s.chain and not wrong:
        raise PlanError("no frame of the program in the traceback")
    if not wrong:
        site = loc.locate(s.chain[0])
    else:
        # the file of the program that defines the op (and its wrong fake): inductor's check names only the op
        path = _defining_file(f"{ns}::{name}", loc)
        site = Located(path, 1)
    site_text = _read(site.path)
    tree = _parse(site.path)
    # the op must be registered before the fake: after the statement that defines it, if that is here
    after = None
    qual = f"{ns}::{name}"
    define_line = None
    src_lines = site_text.splitlines()
    # `lib = torch.library.Library("ns", "DEF")` then `lib.define("name(...) -> ...")`, `lib.impl("name", ...)`:
    # the op's qualified name is never written out
    in_lib = any(isinstance(n, ast.Call) and _terminal(n.func) == "Library" and n.args
                 and isinstance(n.args[0], ast.Constant) and n.args[0].value == ns for n in ast.walk(tree))
    for node in tree.body:
        first = min([node.lineno, *(dec.lineno for dec in getattr(node, "decorator_list", []))])
        seg = "\n".join(src_lines[first - 1 : node.end_lineno or node.lineno])
        if qual in seg or (in_lib and _defines_in_lib(node, name)):
            # where the op is defined, and its real kernels (impl registrations)
            define_line = max(define_line or 0, node.end_lineno or node.lineno)
    if wrong:
        # after the fake it replaces (`@op.register_fake` names the op's function, not "ns::name")
        fakes = [_fake_of(tree, n.name, qual) for n in tree.body
                 if isinstance(n, ast.FunctionDef) and _custom_op_qual(n) == qual]
        ends = [f.end_lineno or f.lineno for f in fakes if f is not None]
        if not ends and define_line is None:
            raise PlanError(f"`{qual}`'s fake is not found in {_rel(site.path)}: replace it by hand")
        define_line = max([define_line or 0, *ends])
    after = define_line
    shim = f"_crashlens_fake_{_ident(ns)}_{_ident(name)}"
    shim_path = os.path.join(os.path.dirname(site.path), shim + ".py")
    text = fill(_need("override-fake" if wrong else "register-fake", s.torch), opname=qual, ns=ns, name=name,
                signature=d.signature or "?") + "\n"
    imp, _ = _module_import(site.path, shim)
    new_site = _insert_after_imports(site_text, [fill(_need("shim-import", s.torch), import_stmt=imp)], tree,
                                     after=after)
    notes = (f"shim: {_rel(shim_path)} registers a derived fake for {qual}"
             + (", in place of the registered one, whose outputs differ from the real kernel's" if wrong else ""),
             f"imported from {_rel(site.path)}" + (f" after line {after}, where the op is defined" if after else ""))
    return Plan("register-fake", f"Register a fake (meta) kernel for `{qual}`", notes,
                (FileEdit(site.path, site_text, new_site), FileEdit(shim_path, None, text)),
                f"register-fake:{qual}", d.id, d.signature)


# --- a fake that reads a tensor's value ------------------------------------------------------------

# Calls whose positional arguments (or a tuple of them) are sizes: where a fake may use a size it computed.
_SIZE_CALLS = frozenset({"new_empty", "new_zeros", "new_ones", "empty", "zeros", "ones", "empty_strided", "view",
                         "reshape", "expand", "new_empty_strided"})


def _custom_op_qual(fn: ast.FunctionDef) -> str | None:
    """`@torch.library.custom_op("ns::name", ...)` over `fn`: "ns::name"."""
    for dec in fn.decorator_list:
        if isinstance(dec, ast.Call) and _terminal(dec.func) == "custom_op" and dec.args \
                and isinstance(dec.args[0], ast.Constant) and isinstance(dec.args[0].value, str):
            return dec.args[0].value
    return None


def _fake_of(tree: ast.Module, op_fn: str, qual: str) -> ast.FunctionDef | None:
    """The module-level function registered as the fake of the op: `@op.register_fake` or
    `@torch.library.register_fake("ns::name")` (or the older `impl_abstract`)."""
    for node in tree.body:
        if not isinstance(node, ast.FunctionDef):
            continue
        for dec in node.decorator_list:
            if isinstance(dec, ast.Attribute) and dec.attr in ("register_fake", "register_abstract") \
                    and isinstance(dec.value, ast.Name) and dec.value.id == op_fn:
                return node
            if isinstance(dec, ast.Call) and _terminal(dec.func) in ("register_fake", "impl_abstract") and dec.args \
                    and isinstance(dec.args[0], ast.Constant) and dec.args[0].value == qual:
                return node
    return None


def _size_only_uses(fake: ast.FunctionDef, name: str) -> bool:
    """`name` is read only as a size: a positional argument (or an element of a tuple/list one) of a call that
    takes sizes (`x.new_empty(n, d)`)."""
    ok: set[int] = set()
    for c in ast.walk(fake):
        if isinstance(c, ast.Call) and _terminal(c.func) in _SIZE_CALLS:
            for a in c.args:
                for e in (a.elts if isinstance(a, (ast.Tuple, ast.List)) else [a]):
                    if isinstance(e, ast.Name) and e.id == name:
                        ok.add(id(e))
    loads = [n for n in ast.walk(fake) if isinstance(n, ast.Name) and n.id == name and isinstance(n.ctx, ast.Load)]
    return bool(loads) and all(id(n) in ok for n in loads)


def _plan_fix_fake(s: Situation, loc: Locator) -> Plan | None:
    """A custom op called at the culprit line whose fake computes an output size from a tensor's value
    (`n = int(keep.sum().item())`): fake tensors have no values, so tracing stops on a data-dependent size. The
    size becomes `torch.library.get_ctx().new_dynamic_size()`, the unbacked size the fake API has for this; the
    real kernel, and so what the program computes, is unchanged."""
    found = _culprit_stmt(s, loc)
    if found is None:
        return None
    where, tree, stmt = found
    ops = {n.name: (n, q) for n in tree.body if isinstance(n, ast.FunctionDef) and (q := _custom_op_qual(n))}
    called = [c for c in ast.walk(stmt) if isinstance(c, ast.Call) and isinstance(c.func, ast.Name)
              and c.func.id in ops]
    fakes = []
    for c in called:
        fn, qual = ops[c.func.id]
        fake = _fake_of(tree, fn.name, qual)
        if fake is not None and any(isinstance(n, ast.Call) and isinstance(n.func, ast.Attribute)
                                    and n.func.attr == "item" and not n.args for n in ast.walk(fake)):
            fakes.append((qual, fake))
    if not fakes:
        return None
    if len({q for q, _ in fakes}) != 1:
        raise PlanError(f"{_rel(where.path)}:{where.line}: several custom ops' fakes read values: one by hand")
    qual, fake = fakes[0]
    if s.torch < (2, 4):
        raise PlanError(f"the fake of `{qual}` reads a value: torch.library.get_ctx().new_dynamic_size() needs "
                        "torch 2.4 or later")
    torch_name = next((k for k, v in _import_aliases(tree).items() if v == "torch"), None)
    if torch_name is None:
        raise PlanError(f"{_rel(where.path)} does not import torch by name")
    rel = f"{_rel(where.path)}:{fake.lineno}"
    edits: list[ast.expr] = []
    for st in ast.walk(fake):
        items = [n for n in ast.walk(st) if isinstance(n, ast.Call) and isinstance(n.func, ast.Attribute)
                 and n.func.attr == "item" and not n.args] if isinstance(st, ast.stmt) and not isinstance(
                     st, (ast.FunctionDef, ast.If, ast.For, ast.While, ast.With, ast.Try)) else []
        if not items:
            continue
        value = st.value if isinstance(st, ast.Assign) else None
        if value is not None and isinstance(value, ast.Call) and _terminal(value.func) == "int" \
                and len(value.args) == 1 and not value.keywords:
            value = value.args[0]  # `int(t.item())`: the same size
        if not (isinstance(st, ast.Assign) and len(st.targets) == 1 and isinstance(st.targets[0], ast.Name)
                and value is items[0] and len(items) == 1 and _size_only_uses(fake, st.targets[0].id)):
            raise PlanError(f"{rel}: the fake of `{qual}` uses a tensor's value (`{ast.unparse(st).strip()}`) for "
                            "more than an output size: write the fake by hand")
        edits.append(st.value)
    every = [n for n in ast.walk(fake) if isinstance(n, ast.Call) and isinstance(n.func, ast.Attribute)
             and n.func.attr == "item" and not n.args]
    if len(every) != len(edits):  # a value read in a test, a loop, a nested function: not a size alone
        raise PlanError(f"{rel}: the fake of `{qual}` uses a tensor's value for more than an output size: write the "
                        "fake by hand")
    text = _read(where.path)
    new_text = text
    for node in sorted(edits, key=lambda n: (n.lineno, n.col_offset), reverse=True):
        new_text = _replace_span(new_text, node, f"{torch_name}.library.get_ctx().new_dynamic_size()")
    return Plan("fix-fake", f"Give the fake of `{qual}` a data-dependent size instead of reading a value ({rel})",
                (f"{rel}: the output size the fake read with `.item()` becomes "
                 "`torch.library.get_ctx().new_dynamic_size()` (fake tensors have no values); the real kernel is "
                 "unchanged",),
                (FileEdit(where.path, text, new_text),), f"fix-fake:{where.path}:{qual}", s.diagnosis.id,
                s.diagnosis.signature)


# --- assume_constant_result, compiler.disable: a decorator on the called function -----------------


def _decorate(s: Situation, loc: Locator, kind: str, title: str) -> Plan | None:
    return _first_of_pairs(s, loc, lambda s_, loc_, pair: _decorate_for(s_, loc_, kind, title, pair))


def _decorate_for(s: Situation, loc: Locator, kind: str, title: str, pair: tuple[Frame, Frame]) -> Plan | None:
    site_f, callee_f = pair
    callee = loc.locate(callee_f)
    tree = _parse(callee.path)
    fn = _func_named(tree, callee_f.function, callee.line)
    if fn is None:
        raise PlanError(f"{callee.path}: no function `{callee_f.function}`")
    if kind == "assume-constant":
        if _return_schema(fn, tree) is not None:
            return None  # returns tensors: a constant would freeze their values
        if not _returns_plain_values(fn):
            return None  # an object dynamo cannot keep as a constant (a namespace, an instance)
        a = fn.args
        for p in [*a.posonlyargs, *a.args, *a.kwonlyargs]:
            t = _schema_type(p.annotation, None) if p.annotation is not None else None
            if t and t.startswith("Tensor"):
                raise PlanError(f"`{fn.name}` takes a tensor: its result depends on values, not a constant")
        site = loc.locate(site_f)
        stree = _parse(site.path)
        stmt = _stmt_at(stree, site.line)
        call = _call_on_line(stree, stmt, site.line, callee_f.function) if stmt is not None else None
        if call is None:
            raise PlanError(f"{site.path}:{site.line}: no single call of `{callee_f.function}`")
        kinds = _param_kinds(fn, call)
        consts = _module_constants(stree)
        if not all(_constant_arg(x, consts) or kinds.get(i) == "const" for i, x in _call_items(call)):
            raise PlanError(f"the call passes a value that may be a tensor: `{ast.unparse(call)}`")
    text = _read(callee.path)
    lines = _lines(text)
    first = min([fn.lineno, *(dec.lineno for dec in fn.decorator_list)])
    deco = _need(kind, s.torch)
    if any(deco.split("#")[0].strip() in ln for ln in lines[first - 1 : fn.lineno]):
        return None  # already there
    indent = _indent_of(lines[fn.lineno - 1])
    nl = _newline(text)
    new_lines = [indent + deco + nl]
    tree_mod = tree
    # assume_constant_result marks the function it is given; dynamo traces through wrappers such as
    # functools.cache (to the function they wrap), so the mark goes on the def itself, under every other
    # decorator. disable wraps whatever it is given: outermost.
    at = fn.lineno if kind == "assume-constant" else first
    out = lines[: at - 1] + new_lines + lines[at - 1 :]
    new_text = "".join(out)
    if not _has_torch_import(tree_mod):
        new_text = _insert_after_imports(new_text, [_need("torch-import", s.torch)], ast.parse(new_text))
    where = f"{_rel(callee.path)}:{fn.lineno}"
    notes = (f"{where}: {deco.split('#')[0].strip()} on `{fn.name}`",) + ((callee.moved,) if callee.moved else ())
    return Plan(kind, title.format(fn=fn.name, where=where), notes, (FileEdit(callee.path, text, new_text),),
                f"{kind}:{callee.path}:{fn.name}", s.diagnosis.id, s.diagnosis.signature)


def _returns_plain_values(fn: ast.FunctionDef | ast.AsyncFunctionDef) -> bool:
    """Results dynamo keeps as constants: numbers, strings, bools, containers of them (not instances)."""
    if _is_generator(fn):
        return False  # a generator, or a context manager made of one: an object used once, not a value
    if fn.returns is not None:
        text = ast.unparse(fn.returns).replace(" ", "")
        return bool(re.fullmatch(r"(?:int|float|bool|str|bytes|None|dict|list|tuple|Optional\[\w+\]"
                                 r"|(?:dict|list|tuple|Dict|List|Tuple)\[.*\])", text))
    for node in ast.walk(fn):
        if isinstance(node, ast.Return) and _owner(fn, node) and node.value is not None:
            v = node.value
            if isinstance(v, ast.Lambda):
                return False
            if isinstance(v, ast.Call):
                name = _terminal(v.func) or ""
                if name[:1].isupper():
                    return False
    return True


def _is_generator(fn: ast.FunctionDef | ast.AsyncFunctionDef) -> bool:
    """`fn` yields (its own `yield`, not a nested function's): calling it makes a generator object."""
    return any(isinstance(n, (ast.Yield, ast.YieldFrom)) and _owner(fn, n) for n in ast.walk(fn))


def _call_items(call: ast.Call) -> list[tuple[int | str, ast.expr]]:
    return [*enumerate(call.args), *((str(k.arg), k.value) for k in call.keywords)]


def _param_kinds(fn: ast.FunctionDef | ast.AsyncFunctionDef, call: ast.Call) -> dict[int | str, str]:
    """For each argument of the call: "const" when the callee's annotation says it is not a tensor."""
    a = fn.args
    params = [*a.posonlyargs, *a.args]
    out: dict[int | str, str] = {}
    by_name = {p.arg: p for p in [*params, *a.kwonlyargs]}
    for key, _ in _call_items(call):
        p = params[key] if isinstance(key, int) and key < len(params) else by_name.get(str(key))
        if p is not None and p.annotation is not None:
            text = ast.unparse(p.annotation).replace(" ", "")
            if text in ("int", "float", "bool", "str", "bytes", "Optional[int]", "Optional[str]", "tuple[int,...]"):
                out[key] = "const"
    return out


def _module_constants(tree: ast.Module) -> set[str]:
    """Names the module binds once, at module level, to a value made without torch (a path, a number, a
    string), and no function rebinds: dynamo reads them as constants."""
    counts: dict[str, int] = {}
    for node in tree.body:
        if isinstance(node, (ast.Assign, ast.AnnAssign)) and node.value is not None:
            targets = node.targets if isinstance(node, ast.Assign) else [node.target]
            clean = "torch" not in _loads(node.value) and not any(
                isinstance(n, (ast.Lambda, ast.ListComp, ast.DictComp, ast.SetComp, ast.GeneratorExp))
                for n in ast.walk(node.value))
            for t in targets:
                if isinstance(t, ast.Name):
                    counts[t.id] = counts.get(t.id, 0) + (1 if clean else 2)
    rebound = {x for f in ast.walk(tree) if isinstance(f, ast.Global) for x in f.names}
    return {k for k, c in counts.items() if c == 1 and k not in rebound}


def _constant_arg(node: ast.expr, module_constants: set[str] = frozenset()) -> bool:  # type: ignore[assignment]
    """Arguments whose value is known while tracing: literals, shapes, sizes, attributes of self, the
    module's own constants."""
    if _literal(node):
        return True
    if isinstance(node, ast.Name) and node.id in module_constants:
        return True
    src = ast.unparse(node)
    if re.search(r"\.(shape|size\(|ndim|dim\(|dtype|device)", src) or src.startswith("len("):
        return True
    if isinstance(node, ast.Attribute) and isinstance(node.value, ast.Name) and node.value.id == "self":
        return True
    return False


def _plan_assume_constant(s: Situation, loc: Locator) -> Plan | None:
    return _decorate(s, loc, "assume-constant",
                     "Run `{fn}` once while tracing and keep its result as a constant ({where})")


def _plan_disable(s: Situation, loc: Locator) -> Plan | None:
    if s.fullgraph is not False:
        return None  # under fullgraph (or when the log does not say) a disabled function is itself an error
    return _decorate(s, loc, "disable", "Run `{fn}` eagerly with @torch.compiler.disable ({where}); the graph may break")


# --- statements: the is_compiling guard, moving an import out --------------------------------------


def _culprit_stmt(s: Situation, loc: Locator) -> tuple[Located, ast.Module, ast.stmt] | None:
    if s.culprit is None:
        return None
    where = loc.locate(s.culprit)
    tree = _parse(where.path)
    stmt = _stmt_at(tree, where.line)
    if stmt is None:
        return None
    return where, tree, stmt


def _side_effect_only(stmt: ast.stmt) -> bool:
    """A statement whose result nothing after it reads: a call for its effect, or a store into an
    attribute or item (not a local name)."""
    if isinstance(stmt, ast.Expr):
        return isinstance(stmt.value, ast.Call)
    if isinstance(stmt, (ast.Assign, ast.AugAssign, ast.AnnAssign)):
        targets = stmt.targets if isinstance(stmt, ast.Assign) else [stmt.target]
        return all(isinstance(t, (ast.Attribute, ast.Subscript)) for t in targets)
    return False


def _plan_guard(s: Situation, loc: Locator) -> Plan | None:
    """The statement dynamo could not trace, skipped under compile; or the `with` it was entering.
    A `with` above the culprit comes first (the manager's own code, and every blocker in it, is left
    out at once, as an opaque op at a library's entry point does); one at the culprit comes after the
    statement guard (`with self._lock: self.calls += 1` is guarded whole)."""
    above = _plan_guard_context(s, loc, above_culprit=True)
    if above is not None:
        return above
    try:
        plan = _plan_guard_stmt(s, loc)
    except PlanError as e:
        plan, error = None, e
    else:
        error = None
    if plan is None:
        plan = _plan_guard_context(s, loc, above_culprit=False)
    if plan is None and error is not None:
        raise error
    return plan


def _plan_guard_context(s: Situation, loc: Locator, above_culprit: bool) -> Plan | None:
    """`with telemetry.span("attn"):` / `with _LOCK:` that dynamo cannot enter, when the block does not use
    what the manager gives (no `as`, or a name nothing reads): under compile the block runs in a
    contextlib.nullcontext() instead; eager enters the manager as before. The outermost such `with` of
    the chain (above the culprit's frame, or the culprit's own), where dynamo was entering it."""
    frames = list(s.chain)
    at = next((i for i, f in enumerate(frames) if s.culprit is not None and f.file == s.culprit.file
               and f.line == s.culprit.line), len(frames) - 1)
    frames = frames[:at] if above_culprit else frames[at:at + 1]
    for f in frames:
        try:
            where = loc.locate(f)
        except PlanError:
            continue
        tree = _parse(where.path)
        node = _with_header_at(tree, where.line)
        if node is None:
            continue
        fn = _func_at(tree, where.line)
        if fn is None:
            continue
        items = [i for i in node.items
                 if i.context_expr.lineno <= where.line <= (i.context_expr.end_lineno or i.context_expr.lineno)]
        if len(items) != 1:
            items = node.items if len(node.items) == 1 else []
        if not items:
            raise PlanError(f"{_rel(where.path)}:{where.line}: several context managers on the line: guard by hand")
        item = items[0]
        found = _state_write([item.context_expr], tree)
        if found is not None:
            call, entry = found
            raise PlanError(f"{_rel(where.path)}:{where.line}: `{call}(...)` changes {entry['name']} (and puts it "
                            f"back on exit), which {entry['read_by']}: entered only in eager, the block would "
                            "change it for the rest of the program under compile")
        bound = {n.id for n in ast.walk(item.optional_vars) if isinstance(n, ast.Name)}             if item.optional_vars is not None else set()
        if bound & {n.id for st in node.body for n in ast.walk(st) if isinstance(n, ast.Name)}:
            raise PlanError(f"{_rel(where.path)}:{where.line}: the block uses what the context manager gives "
                            f"(`as {ast.unparse(item.optional_vars)}`)")
        text = _read(where.path)
        expr = item.context_expr
        new_text = _replace_span(text, expr, fill(_need("guard-context", s.torch), expr=ast.unparse(expr)))
        new_tree = ast.parse(new_text)
        add = []
        if not any(isinstance(n, ast.Import) and any(a.name == "contextlib" and a.asname is None for a in n.names)
                   for n in tree.body):
            add.append(_need("contextlib-import", s.torch))
        if not _has_torch_import(tree):
            add.append(_need("torch-import", s.torch))
        if add:
            new_text = _insert_after_imports(new_text, add, new_tree)
        rel = f"{_rel(where.path)}:{node.lineno}"
        kind_of = "a library patch" if "site-packages" in where.path else "your code"
        notes = (f"{rel}: `{ast.unparse(expr)}` is entered only in eager now ({kind_of}); under torch.compile "
                 "the block runs in contextlib.nullcontext() (what the manager does around it, a timing, a lock, "
                 "happens in eager only)",) + ((where.moved,) if where.moved else ())
        return Plan("guard", f"Enter `{ast.unparse(expr)}` at {rel} only when not compiling", notes,
                    (FileEdit(where.path, text, new_text),), f"guard-context:{where.path}:{node.lineno}",
                    s.diagnosis.id, s.diagnosis.signature)
    return None


def _with_header_at(tree: ast.AST, line: int) -> ast.With | ast.AsyncWith | None:
    """The innermost `with` whose header (its context expressions, not its block) spans `line`."""
    best = None
    for n in ast.walk(tree):
        if isinstance(n, (ast.With, ast.AsyncWith)):
            end = max((i.context_expr.end_lineno or i.context_expr.lineno) for i in n.items)
            if n.lineno <= line <= end and (best is None or n.lineno >= best.lineno):
                best = n
    return best


def _plan_guard_stmt(s: Situation, loc: Locator) -> Plan | None:
    found = _culprit_stmt(s, loc)
    if found is None:
        return None
    where, tree, stmt = found
    fn = _func_at(tree, where.line)
    if fn is None:
        raise PlanError("the statement is at module level")
    group: list[ast.stmt] | None
    if isinstance(stmt, ast.If) and where.line == stmt.lineno and (_reports_only(stmt, fn) or _copies_only(stmt, fn)):
        # `if torch.isnan(y).any(): logger.warning(...)`: a check that only reports; `if x.data_ptr() % 64:
        # x = x.contiguous().clone()`: one that only copies. Under compile the whole check is skipped (its
        # test is what dynamo could not trace or branch on); no value changes
        group = [stmt]
    elif isinstance(stmt, (ast.If, ast.For, ast.While, ast.Try, ast.FunctionDef, ast.ClassDef,
                           ast.Return, ast.Import, ast.ImportFrom)):
        return None
    elif isinstance(stmt, ast.With) and where.line != stmt.lineno:
        return None  # a statement inside the block: the block's own statement is the culprit then
    else:
        group = _dead_under_compile(fn, stmt, clock=_reads_clock(stmt, tree))
    if group is None:
        raise PlanError(f"{_rel(where.path)}:{where.line}: what the statement computes is used further on: "
                        "skipping it under compile would change what the code computes")
    _refuse_state_change(where, tree, fn, group)
    text = _read(where.path)
    lines = _lines(text)
    nl = _newline(text)
    for st in sorted(group, key=lambda n: -n.lineno):  # bottom up: earlier line numbers stay valid
        l0, l1 = st.lineno - 1, (st.end_lineno or st.lineno) - 1
        first = lines[l0]
        if first[: st.col_offset].strip() or (l1 + 1 < len(lines) and _same_line_tail(lines[l1], st)):
            raise PlanError("the statement shares its line with another")
        indent = _indent_of(first)
        body = "".join("    " + ln if ln.strip() else ln for ln in lines[l0 : l1 + 1]).rstrip("\r\n")
        guard = fill(_need("guard", s.torch), stmt=body)
        new_lines = [(indent + g if i == 0 else g) + nl for i, g in enumerate(guard.split("\n"))]
        lines = lines[:l0] + new_lines + lines[l1 + 1 :]
    new_text = "".join(lines)
    if not _has_torch_import(tree):
        new_text = _insert_after_imports(new_text, [_need("torch-import", s.torch)], ast.parse(new_text))
    rel = f"{_rel(where.path)}:{where.line}"
    kind_of = "a library patch" if "site-packages" in where.path or s.caller is not None else "your code"
    others = sorted(st.lineno for st in group if st is not stmt)
    also = f" (with line(s) {', '.join(map(str, others))}, which only use its result)" if others else ""
    notes = (f"{rel}{also}: runs only in eager now ({kind_of}); under torch.compile it is skipped",) + \
        tuple(f"{_rel(where.path)}:{st.lineno}: under torch.compile this time budget is not checked: the compiled "
              "graph runs every turn of the loop (eager still stops when the budget runs out)"
              for st in group if isinstance(st, ast.If) and _leaves_loop_only(st, fn)) + \
        ((where.moved,) if where.moved else ())
    return Plan("guard", f"Guard {rel} with torch.compiler.is_compiling()", notes,
                (FileEdit(where.path, text, new_text),), f"guard:{where.path}:{stmt.lineno}", s.diagnosis.id,
                s.diagnosis.signature)


def _refuse_state_change(where: Located, tree: ast.Module, fn: ast.FunctionDef | ast.AsyncFunctionDef,
                         group: list[ast.stmt]) -> None:
    """A guard must not skip a statement whose effect later code reads: raise PlanError when `group` changes
    process state (signatures/patches/state.toml) or state that code outside it reads."""
    rel = f"{_rel(where.path)}:{where.line}"
    found = _state_write(list(group), tree)
    if found is not None:
        call, entry = found
        raise PlanError(f"{rel}: `{call}(...)` changes {entry['name']}, which {entry['read_by']}: skipped under "
                        "compile, they would read what eager never leaves there, and the program would compute "
                        "other values")
    later = _state_read_later(tree, fn, group)
    if later is not None:
        raise PlanError(f"{rel}: the statement changes {later}: skipped under compile, that read would see what "
                        "eager never leaves there")


def _same_line_tail(line: str, st: ast.stmt) -> bool:
    """Another statement after this one on its last line (`a(); b()`)."""
    tail = line.encode("utf-8")[st.end_col_offset or 0 :].decode("utf-8", "replace").strip()
    return bool(tail) and not tail.startswith("#")


def _simple_stmts(fn: ast.AST) -> list[ast.stmt]:
    return [n for n in ast.walk(fn) if isinstance(n, ast.stmt) and not isinstance(n, (
        ast.If, ast.For, ast.AsyncFor, ast.While, ast.With, ast.AsyncWith, ast.Try, ast.FunctionDef,
        ast.AsyncFunctionDef, ast.ClassDef))]


def _loads(node: ast.AST) -> set[str]:
    return {n.id for n in ast.walk(node) if isinstance(n, ast.Name) and isinstance(n.ctx, ast.Load)}


def _stores(st: ast.stmt) -> set[str]:
    targets: list[ast.expr] = []
    if isinstance(st, ast.Assign):
        targets = list(st.targets)
    elif isinstance(st, (ast.AugAssign, ast.AnnAssign)):
        targets = [st.target]
    return {n.id for t in targets for n in ast.walk(t) if isinstance(n, ast.Name) and isinstance(n.ctx, ast.Store)}


def clocks() -> list[dict[str, Any]]:
    """signatures/patches/constants.toml's clocks: calls that read the time."""
    if not _CLOCKS:
        _CLOCKS.extend(_load_toml(_patches_dir() / "constants.toml").get("clock", []))
    return _CLOCKS


def _reads_clock(stmt: ast.stmt, tree: ast.Module) -> bool:
    """`t0 = time.perf_counter()`: the statement's value is a clock's reading (signatures/patches/constants.toml)."""
    if not isinstance(stmt, (ast.Assign, ast.AnnAssign)) or stmt.value is None:
        return False
    aliases = _import_aliases(tree)
    known = {c["call"] for c in clocks()}
    for node in ast.walk(stmt.value):  # `t0 = time.perf_counter()`, `deadline = time.monotonic() + budget`
        name = _dotted(node.func) if isinstance(node, ast.Call) else None
        if name is None:
            continue
        root, _, rest = name.partition(".")
        if aliases.get(root, root) + ("." + rest if rest else "") in known:
            return True
    return False


def _state_write(nodes: list[ast.AST], tree: ast.Module) -> tuple[str, dict[str, Any]] | None:
    """The first call in `nodes` that changes state of the process that later code reads (a random stream
    reseeded, a default dtype set: signatures/patches/state.toml), as (its text, its entry)."""
    aliases = _import_aliases(tree)
    for top in nodes:
        for node in ast.walk(top):
            if not isinstance(node, ast.Call):
                continue
            name = _dotted(node.func)
            full = None
            if name is not None:
                root, _, rest = name.partition(".")
                full = aliases.get(root, root) + ("." + rest if rest else "")
            method = node.func.attr if isinstance(node.func, ast.Attribute) else None
            for entry in process_state():
                if full in entry.get("calls", ()) or (method is not None and method in entry.get("methods", ())):
                    return ast.unparse(node.func), entry
    return None


# Methods that change the object they are called on (a container, a queue, a tensor in place: `add_`).
_MUTATORS = frozenset({"append", "extend", "insert", "add", "update", "pop", "popitem", "popleft", "clear", "remove",
                       "discard", "setdefault", "put", "put_nowait", "appendleft", "extendleft", "sort", "reverse",
                       "rotate", "fill", "write", "seek", "truncate"})
# Methods that change an nn.Module (or a tensor's storage) when called for their effect, as a statement of their
# own (`self.to(x.dtype)`, `self.train()`): `y = x.float()` makes a new tensor and changes nothing.
_EFFECT_MUTATORS = frozenset({"to", "half", "float", "double", "bfloat16", "cuda", "cpu", "type", "train", "eval",
                              "apply", "load_state_dict", "register_buffer", "register_parameter", "add_module",
                              "zero_grad", "share_memory", "set_", "resize_"})


def _state_read_later(tree: ast.Module, fn: ast.FunctionDef | ast.AsyncFunctionDef,
                      group: list[ast.stmt]) -> str | None:
    """What the statements of `group` change that code outside them reads, as text for the message: a
    container or tensor they change in place (`self.seen.add(k)`, `buf.add_(x)`) that `fn` reads elsewhere,
    a module global they assign (`global _STEP`) that any function of the module reads. Skipped under
    compile, that reader would see what eager never leaves there."""
    inside = {id(n) for st in group for n in ast.walk(st)}
    changed: set[str] = set()
    for st in group:
        effect = {id(n.value) for n in ast.walk(st) if isinstance(n, ast.Expr)}
        for node in ast.walk(st):
            if isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute):
                attr = node.func.attr
                if attr in _MUTATORS or (attr.endswith("_") and not attr.startswith("_")) or \
                        (id(node) in effect and attr in _EFFECT_MUTATORS):
                    if isinstance(node.func.value, (ast.Name, ast.Attribute)):
                        changed.add(ast.unparse(node.func.value))
    if changed:
        for node in ast.walk(fn):
            if id(node) in inside or not isinstance(node, (ast.Name, ast.Attribute)):
                continue
            if isinstance(node.ctx, ast.Load) and ast.unparse(node) in changed:
                return f"`{ast.unparse(node)}`, which line {node.lineno} reads"
    declared = {n for g in ast.walk(fn) if isinstance(g, ast.Global) for n in g.names}
    stored = {n for st in group for n in _stores(st) | {a.target.id for a in ast.walk(st)
              if isinstance(a, ast.AugAssign) and isinstance(a.target, ast.Name)}} & declared
    if stored:
        for node in ast.walk(tree):
            if id(node) in inside or not isinstance(node, ast.Name) or not isinstance(node.ctx, ast.Load):
                continue
            if node.id in stored:
                return f"the module global `{node.id}`, which line {node.lineno} reads"
    return None


def _leaves_loop_only(node: ast.If, fn: ast.FunctionDef | ast.AsyncFunctionDef) -> bool:
    """`if time.perf_counter() - t0 > budget: break`: an `if` (inside a loop of `fn`) whose branch only leaves
    the loop or goes on to its next turn, perhaps after reporting."""
    in_loop = any(isinstance(lp, (ast.For, ast.While)) and any(n is node for st in lp.body for n in ast.walk(st))
                  for lp in ast.walk(fn))
    if not in_loop or node.orelse:
        return False
    local = _function_locals(fn)
    for st in node.body:
        if isinstance(st, (ast.Break, ast.Continue, ast.Pass)):
            continue
        if isinstance(st, ast.Expr) and isinstance(st.value, ast.Call):
            root = _root_name(st.value.func)
            if root is not None and root not in local and root not in ("self", "cls"):
                continue
        return False
    return any(isinstance(st, (ast.Break, ast.Continue)) for st in node.body)


def _dead_under_compile(fn: ast.FunctionDef | ast.AsyncFunctionDef, stmt: ast.stmt,
                        clock: bool = False) -> list[ast.stmt] | None:
    """The statement and every later one that only uses what it computes, when none of them feeds anything
    else (the return value, a condition, a tensor): skipping them all under compile changes no result.
    With `clock` (the statement reads a clock), a time-budget exit (`if now - t0 > budget: break`) joins
    them: a compiled graph runs every turn of the loop, as eager does while within its budget."""
    if isinstance(stmt, ast.With):
        # a block of bookkeeping under a context manager (a lock held while a counter is bumped): the
        # whole block, when it holds only calls and stores, and what it stores feeds nothing else
        names = _bookkeeping_stores(stmt)
        if names is None:
            return None
    elif not isinstance(stmt, (ast.Expr, ast.Assign, ast.AugAssign, ast.AnnAssign)):
        return None
    elif isinstance(stmt, ast.Expr) and not isinstance(stmt.value, ast.Call):
        return None
    else:
        names = _stores(stmt)
    group = [stmt]
    inside = {id(n) for n in ast.walk(stmt)}
    simple = [st for st in _simple_stmts(fn) if id(st) not in inside or st is stmt]
    compound_heads = [n for n in ast.walk(fn) if isinstance(n, (ast.If, ast.For, ast.While, ast.With))]
    todo = set(names)
    seen: set[str] = set()
    while todo:
        name = todo.pop()
        seen.add(name)
        for head in compound_heads:
            if any(head is n for g in group for n in ast.walk(g)):
                continue
            test = getattr(head, "test", None) or getattr(head, "iter", None)
            items = getattr(head, "items", None)
            exprs = [test] if test is not None else [i.context_expr for i in items or []]
            if any(name in _loads(e) for e in exprs if e is not None):
                if isinstance(head, ast.If) and _reports_only(head, fn):
                    group.append(head)  # `if time.monotonic() - start > budget: warnings.warn(...)`
                    continue
                if clock and isinstance(head, ast.If) and _leaves_loop_only(head, fn):
                    group.append(head)  # `if time.perf_counter() - t0 > self.budget_s: break`
                    continue
                return None
        for st in simple:
            if st in group or st.lineno <= stmt.lineno and st is not stmt and name not in _loads(st):
                continue
            if any(st is n for g in group if isinstance(g, ast.If) for n in ast.walk(g)):
                continue  # inside a reporting `if` that is skipped whole
            if name not in _loads(st):
                continue
            if isinstance(st, ast.Return):
                return None
            if isinstance(st, ast.Expr) and isinstance(st.value, ast.Call):
                group.append(st)
                continue
            if isinstance(st, (ast.Assign, ast.AugAssign, ast.AnnAssign)):
                group.append(st)
                todo |= _stores(st) - seen
                continue
            return None
    # a store into an attribute or item (self.x = ..., os.environ[...] = ...) stays in the object: fine,
    # unless the function reads it back (`if self.w is None: ... self.w = P(...)`, then `x @ self.w`):
    # skipped under compile, the read would find what eager never leaves there. A local name that nothing
    # reads after is fine too.
    if _reads_back(fn, group):
        return None
    return group


def _reads_back(fn: ast.AST, group: list[ast.stmt]) -> bool:
    """Whether `fn` loads, outside the statements of `group`, an attribute or item one of them stores."""
    stored: set[str] = set()
    inside: set[int] = set()
    for st in group:
        inside |= {id(n) for n in ast.walk(st)}
        for node in ast.walk(st):
            if isinstance(node, (ast.Attribute, ast.Subscript)) and isinstance(node.ctx, ast.Store):
                stored.add(ast.unparse(node))
    if not stored:
        return False
    for node in ast.walk(fn):
        if id(node) in inside or not isinstance(node, (ast.Attribute, ast.Subscript)):
            continue
        if isinstance(node.ctx, ast.Load) and ast.unparse(node) in stored:
            return True
    return False


def _reports_only(node: ast.If, fn: ast.FunctionDef | ast.AsyncFunctionDef) -> bool:
    """An `if` whose branches only report: calls of a module-level name or a builtin (a logger, warnings,
    print, a metrics package) whose results nothing keeps. No assignment, no raise or assert (skipping a
    check that stops the program would hide a failure), no return, no call on the function's own values
    (`y.add_(1)` changes what it computes)."""
    local = _function_locals(fn)

    def ok(body: list[ast.stmt]) -> bool:
        for st in body:
            if isinstance(st, ast.Pass):
                continue
            if isinstance(st, ast.If):
                if not ok(st.body) or not ok(st.orelse):
                    return False
                continue
            if not (isinstance(st, ast.Expr) and isinstance(st.value, ast.Call)):
                return False
            root = _root_name(st.value.func)
            if root is None or root in local or root in ("self", "cls"):
                return False
        return True

    return bool(node.body) and ok(node.body) and ok(node.orelse)


# Methods that give a tensor with the same values: a copy, another memory layout.
_SAME_VALUES = frozenset({"contiguous", "clone", "detach"})


def _copies_only(node: ast.If, fn: ast.FunctionDef | ast.AsyncFunctionDef) -> bool:
    """`if x.data_ptr() % 64 != 0 or not x.is_contiguous(): x = x.contiguous().clone()`: an `if` whose branches
    only rebind a name to a copy of itself (same values, another layout or storage), when nothing in the
    function changes that name's tensor in place afterwards (skipping the copy would then change the
    caller's tensor)."""
    names: set[str] = set()

    def ok(body: list[ast.stmt]) -> bool:
        for st in body:
            if not (isinstance(st, ast.Assign) and len(st.targets) == 1 and isinstance(st.targets[0], ast.Name)):
                return False
            target, v = st.targets[0].id, st.value
            if not isinstance(v, ast.Call):
                return False
            while isinstance(v, ast.Call) and isinstance(v.func, ast.Attribute) and v.func.attr in _SAME_VALUES \
                    and not v.args and all(k.arg == "memory_format" for k in v.keywords):
                v = v.func.value
            if not (isinstance(v, ast.Name) and v.id == target):
                return False
            names.add(target)
        return True

    if not node.body or not ok(node.body) or not ok(node.orelse):
        return False
    after = [n for n in ast.walk(fn) if getattr(n, "lineno", 0) > (node.end_lineno or node.lineno)]
    for n in after:
        if isinstance(n, ast.Call) and isinstance(n.func, ast.Attribute) and n.func.attr.endswith("_") \
                and not n.func.attr.startswith("_") and _root_name(n.func.value) in names:
            return False  # `x.mul_(2)`: in place
        if isinstance(n, (ast.Subscript, ast.Attribute)) and isinstance(n.ctx, ast.Store) and _root_name(n.value) in names:
            return False  # `x[0] = ...`
        if isinstance(n, ast.AugAssign) and isinstance(n.target, ast.Name) and n.target.id in names:
            return False  # `x += y` is in place on a tensor
    return True


def _bookkeeping_stores(block: ast.With) -> set[str] | None:
    """The local names a `with` block stores, when its body is only calls and stores (no return, branch,
    loop or nested function); None otherwise."""
    names = {n.id for item in block.items if item.optional_vars is not None
             for n in ast.walk(item.optional_vars) if isinstance(n, ast.Name)}
    for st in block.body:
        if isinstance(st, ast.With):
            inner = _bookkeeping_stores(st)
            if inner is None:
                return None
            names |= inner
        elif isinstance(st, ast.Expr) and isinstance(st.value, ast.Call):
            continue
        elif isinstance(st, (ast.Assign, ast.AugAssign, ast.AnnAssign)):
            names |= _stores(st)
        elif not isinstance(st, ast.Pass):
            return None
    return names


def _plan_move_import(s: Situation, loc: Locator) -> Plan | None:
    found = _culprit_stmt(s, loc)
    if found is None:
        return None
    where, tree, stmt = found
    if not isinstance(stmt, (ast.Import, ast.ImportFrom)):
        return None
    fn = _func_at(tree, where.line)
    if fn is None:
        return None
    if isinstance(stmt, ast.ImportFrom) and stmt.level:
        pass  # relative imports move as they are: the module is the same
    text = _read(where.path)
    lines = _lines(text)
    l0, l1 = stmt.lineno - 1, (stmt.end_lineno or stmt.lineno) - 1
    if lines[l0][: stmt.col_offset].strip():
        raise PlanError("the import shares its line with another statement")
    indent = _indent_of(lines[l0])
    nl = _newline(text)
    only = len(fn.body) == 1 or (len(fn.body) == 2 and isinstance(fn.body[0], ast.Expr)
                                  and isinstance(getattr(fn.body[0], "value", None), ast.Constant))
    repl = [indent + "pass" + nl] if only else []
    stripped = lines[:l0] + repl + lines[l1 + 1 :]
    stmt_text = " ".join(x.strip() for x in lines[l0 : l1 + 1])
    new_text = "".join(stripped)
    new_text = _insert_after_imports(new_text, [fill(_need("move-import", s.torch), stmt=stmt_text,
                                                      function=fn.name)], ast.parse(new_text))
    rel = f"{_rel(where.path)}:{where.line}"
    return Plan("move-import", f"Move the import at {rel} out of `{fn.name}` to module level",
                (f"{rel}: `{stmt_text}` now runs once, when the module loads",), (FileEdit(where.path, text, new_text),),
                f"move-import:{where.path}:{stmt_text}", s.diagnosis.id, s.diagnosis.signature)


def _function_locals(fn: ast.FunctionDef | ast.AsyncFunctionDef) -> set[str]:
    a = fn.args
    names = {p.arg for p in [*a.posonlyargs, *a.args, *a.kwonlyargs]}
    names |= {x.arg for x in (a.vararg, a.kwarg) if x is not None}
    for n in ast.walk(fn):
        if isinstance(n, ast.Name) and isinstance(n.ctx, ast.Store):
            names.add(n.id)
        elif isinstance(n, (ast.Import, ast.ImportFrom)):
            names |= {(al.asname or al.name).split(".")[0] for al in n.names}
        elif isinstance(n, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)) and n is not fn:
            names.add(n.name)
    return names


def _top_level_of(tree: ast.Module, line: int) -> ast.stmt | None:
    for node in tree.body:
        if node.lineno <= line <= (node.end_lineno or node.lineno):
            return node
    return None


def _plan_move_to_module(s: Situation, loc: Locator) -> Plan | None:
    """A class statement (or a call with constant arguments whose result is no tensor) taken out of a
    traced function and done once at module level."""
    found = _culprit_stmt(s, loc)
    if found is None:
        return None
    where, tree, stmt = found
    fn = _func_at(tree, where.line)
    if fn is None:
        return None
    if isinstance(stmt, ast.ClassDef):
        return _move_class(s, where, tree, fn, stmt)
    # the user's call of a library helper first (one change in the user's code), then a process constant
    # read in the statement itself
    try:
        plan = _first_of_pairs(s, loc, _hoist_call_for)
    except PlanError as e:
        plan, error = None, e
    else:
        error = None
    if plan is None:
        plan = _hoist_constant_probe(s, where, tree, fn, stmt)
    if plan is None and error is not None:
        raise error
    return plan


def _import_aliases(tree: ast.Module) -> dict[str, str]:
    """What each name bound by a module-level import stands for: `import os as o` -> {"o": "os"},
    `from os import cpu_count` -> {"cpu_count": "os.cpu_count"}."""
    out: dict[str, str] = {}
    for node in tree.body:
        if isinstance(node, ast.Import):
            for al in node.names:
                if al.asname:
                    out[al.asname] = al.name
                else:
                    root = al.name.split(".")[0]
                    out[root] = root
        elif isinstance(node, ast.ImportFrom) and node.module and not node.level:
            for al in node.names:
                out[al.asname or al.name] = f"{node.module}.{al.name}"
    return out


def _dotted(func: ast.expr) -> str | None:
    parts: list[str] = []
    while isinstance(func, ast.Attribute):
        parts.append(func.attr)
        func = func.value
    if not isinstance(func, ast.Name):
        return None
    parts.append(func.id)
    return ".".join(reversed(parts))


def _hoist_constant_probe(s: Situation, where: Located, tree: ast.Module, fn: ast.FunctionDef | ast.AsyncFunctionDef,
                          stmt: ast.stmt) -> Plan | None:
    """`n = min(os.cpu_count() or 1, x.shape[0])`: a call of the catalog's process constants (a machine or
    interpreter fact, signatures/patches/constants.toml) with constant arguments, that dynamo cannot trace,
    computed once at module level; the statement reads the value. Its other parts stay as they were."""
    if isinstance(stmt, ast.Expr):
        return None  # `print(os.cpu_count())`: a call for its effect, which the guard skips whole
    known = {c["call"]: c for c in process_constants()}
    aliases = _import_aliases(tree)
    local = _function_locals(fn)
    consts = _module_constants(tree)
    callee = s.diagnosis.callee or ""
    found: list[tuple[ast.Call, str]] = []
    for node in ast.walk(stmt):
        if not isinstance(node, ast.Call) or not _owner(fn, node):
            continue
        name = _dotted(node.func)
        if name is None:
            continue
        root, _, rest = name.partition(".")
        if root in local or root not in aliases:
            continue
        canonical = aliases[root] + ("." + rest if rest else "")
        entry = known.get(canonical)
        if entry is None:
            continue
        if callee and callee not in (canonical, *entry.get("dynamo", [])) \
                and callee.rsplit(".", 1)[-1] != canonical.rsplit(".", 1)[-1]:
            continue  # a probe, but not the call dynamo stopped at
        def constant(x: ast.expr) -> bool:
            # a literal, the module's own constant, or a module's attribute (`ctypes.c_void_p`)
            dotted = _dotted(x) if isinstance(x, ast.Attribute) else None
            return _literal(x) or (isinstance(x, ast.Name) and x.id in consts) or (
                dotted is not None and dotted.split(".")[0] in aliases and dotted.split(".")[0] not in local)

        if not all(constant(x) for _, x in _call_items(node)):
            raise PlanError(f"`{ast.unparse(node)}` passes values known only at run time: it cannot move to module level")
        found.append((node, canonical))
    if not found or len({ast.unparse(c) for c, _ in found}) != 1:
        return None  # none, or several different probes: one change per round, by hand when unclear
    call, canonical = found[0]
    call_text = ast.unparse(call)
    # the same call elsewhere in the function reads the same value: all of them in one round
    found += [(node, canonical) for node in ast.walk(fn)
              if isinstance(node, ast.Call) and _owner(fn, node) and ast.unparse(node) == call_text
              and not any(node is c for c, _ in found)]
    text = _read(where.path)
    nl = _newline(text)
    name = f"_CRASHLENS_{_ident(canonical).upper()}"
    new_text = text
    for node, _ in sorted(found, key=lambda f: (f[0].lineno, f[0].col_offset), reverse=True):
        new_text = _replace_span(new_text, node, name)
    new_tree = ast.parse(new_text)
    top = _top_level_of(new_tree, fn.lineno)
    if top is None:
        return None
    lines = _lines(new_text)
    after = top.end_lineno or top.lineno
    fork = bool(known[canonical].get("after_fork"))
    stmt_text = fill(_need("hoist-call-fork" if fork else "hoist-call", s.torch), name=name, call=call_text,
                     function=fn.name).replace("\n", nl)
    lines = lines[:after] + [nl, nl, stmt_text + nl] + lines[after:]
    new_text = "".join(lines)
    rel = f"{_rel(where.path)}:{where.line}"
    why = known[canonical].get("why", "") + ("; computed again in a forked child" if fork else "")
    return Plan("move-to-module", f"Call `{call_text}` once at module level instead of in `{fn.name}` ({rel})",
                (f"{rel}: `{call_text}` becomes `{name}`, computed when the module loads"
                 + (f" ({why})" if why else ""),) + ((where.moved,) if where.moved else ()),
                (FileEdit(where.path, text, new_text),), f"hoist:{where.path}:{name}", s.diagnosis.id,
                s.diagnosis.signature)


def _move_class(s: Situation, where: Located, tree: ast.Module, fn: ast.FunctionDef | ast.AsyncFunctionDef,
                cls: ast.ClassDef) -> Plan | None:
    local = _function_locals(fn) - {cls.name}
    used = set()
    for part in [*cls.decorator_list, *cls.bases, *(k.value for k in cls.keywords), *cls.body]:
        used |= _loads(part)
    clash = sorted(used & local)
    if clash:
        raise PlanError(f"class `{cls.name}` uses the function's own names ({', '.join(clash)}): it cannot move")
    top = _top_level_of(tree, fn.lineno)
    if top is None:
        return None
    text = _read(where.path)
    lines = _lines(text)
    nl = _newline(text)
    first = min([cls.lineno, *(d.lineno for d in cls.decorator_list)])
    l0, l1 = first - 1, (cls.end_lineno or cls.lineno) - 1
    block = lines[l0 : l1 + 1]
    cut = len(_indent_of(block[0]))
    moved = [ln[cut:] if ln[:cut].strip() == "" else ln.lstrip() for ln in block]
    if not moved[-1].endswith(("\n", "\r")):
        moved[-1] += nl
    remaining = lines[:l0] + lines[l1 + 1 :]
    top_first = min([top.lineno, *(d.lineno for d in getattr(top, "decorator_list", []))]) - 1
    note = fill(_need("move-to-module", s.torch), what=f"class {cls.name}", function=fn.name) + nl
    new_lines = remaining[:top_first] + [note] + moved + [nl, nl] + remaining[top_first:]
    new_text = "".join(new_lines)
    try:
        ast.parse(new_text)
    except SyntaxError:
        raise PlanError(f"moving class `{cls.name}` would leave `{fn.name}` empty") from None
    rel = f"{_rel(where.path)}:{where.line}"
    return Plan("move-to-module", f"Move class `{cls.name}` out of `{fn.name}` to module level ({rel})",
                (f"{rel}: the class is built once, when the module loads, instead of on every call",),
                (FileEdit(where.path, text, new_text),), f"move-class:{where.path}:{cls.name}", s.diagnosis.id,
                s.diagnosis.signature)


def _hoist_call_for(s: Situation, loc: Locator, pair: tuple[Frame, Frame]) -> Plan | None:
    site_f, callee_f = pair
    site = loc.locate(site_f)
    callee = loc.locate(callee_f)
    tree = _parse(site.path)
    stmt = _stmt_at(tree, site.line)
    call = _call_on_line(tree, stmt, site.line, callee_f.function) if stmt is not None else None
    if call is None:
        raise PlanError(f"{site.path}:{site.line}: no single call of `{callee_f.function}`")
    if not _is_plain_ref(call.func):
        raise PlanError(f"`{ast.unparse(call.func)}` is a method or computed callable")
    consts = _module_constants(tree)
    if not all(_literal(x) or (isinstance(x, ast.Name) and x.id in consts) for _, x in _call_items(call)):
        raise PlanError(f"`{ast.unparse(call)}` passes values known only at run time: it cannot move to module level")
    ctree = _parse(callee.path)
    cfn = _func_named(ctree, callee_f.function, callee.line)
    if cfn is None or _return_schema(cfn, ctree) is not None:
        return None  # it returns tensors: a module-level value would freeze them
    if _is_generator(cfn):
        return None  # a generator or context manager made once would be used up by the first call
    fn = _func_at(tree, site.line)
    if fn is None or _top_level_of(tree, fn.lineno) is None:
        return None
    expr = ast.unparse(call.func).split(".")[0]
    if expr in _function_locals(fn):
        raise PlanError(f"`{expr}` is local to `{fn.name}`")
    text = _read(site.path)
    nl = _newline(text)
    name = f"_CRASHLENS_{_ident(callee_f.function).upper()}"
    new_text = _replace_span(text, call, name)
    new_tree = ast.parse(new_text)
    # after the caller's own top-level statement and, when the callee is in this file, after its def
    after = (_top_level_of(new_tree, fn.lineno) or fn).end_lineno or fn.lineno
    if os.path.abspath(callee.path) == os.path.abspath(site.path):
        top = _top_level_of(new_tree, cfn.lineno)
        after = max(after, (top.end_lineno if top else cfn.end_lineno) or 0)
    lines = _lines(new_text)
    stmt_text = fill(_need("hoist-call", s.torch), name=name, call=ast.unparse(call), function=fn.name)
    lines = lines[:after] + [nl, nl, stmt_text + nl] + lines[after:]
    new_text = "".join(lines)
    rel = f"{_rel(site.path)}:{site.line}"
    return Plan("move-to-module", f"Call `{ast.unparse(call)}` once at module level instead of in `{fn.name}` ({rel})",
                (f"{rel}: `{ast.unparse(call)}` becomes `{name}`, computed when the module loads",),
                (FileEdit(site.path, text, new_text),), f"hoist:{site.path}:{name}", s.diagnosis.id,
                s.diagnosis.signature)


# Calls whose result depends on a random stream: lazy setup that draws from one cannot move to __init__
# without changing what the program computes (it would draw earlier, before the caller's seeding).
_RANDOM_DRAW = re.compile(r"\b(?:rand\w*|random\w*|normal_?|uniform_?|bernoulli_?|multinomial|Generator|"
                          r"manual_seed|seed|shuffle|choice|sample|dropout\w*|\w+_init|init\.\w+)\b")


def _lazy_attr(test: ast.expr) -> str | None:
    """`self.handle is None` / `getattr(self, "handle", None) is None` / `not hasattr(self, "handle")`: the
    attribute a lazy set-up fills in, or None."""
    if isinstance(test, ast.Compare) and len(test.ops) == 1 and isinstance(test.ops[0], ast.Is) \
            and isinstance(test.comparators[0], ast.Constant) and test.comparators[0].value is None:
        left = test.left
        if isinstance(left, ast.Attribute) and isinstance(left.value, ast.Name) and left.value.id == "self":
            return left.attr
        if isinstance(left, ast.Call) and isinstance(left.func, ast.Name) and left.func.id == "getattr" \
                and len(left.args) == 3 and isinstance(left.args[0], ast.Name) and left.args[0].id == "self" \
                and isinstance(left.args[1], ast.Constant) and isinstance(left.args[1].value, str) \
                and isinstance(left.args[2], ast.Constant) and left.args[2].value is None:
            return left.args[1].value  # `getattr(self, "cache", None) is None`
    if isinstance(test, ast.UnaryOp) and isinstance(test.op, ast.Not) and isinstance(test.operand, ast.Call):
        c = test.operand
        if isinstance(c.func, ast.Name) and c.func.id == "hasattr" and len(c.args) == 2 \
                and isinstance(c.args[0], ast.Name) and c.args[0].id == "self" \
                and isinstance(c.args[1], ast.Constant) and isinstance(c.args[1].value, str):
            return c.args[1].value
    return None


def _plan_move_to_init(s: Situation, loc: Locator) -> Plan | None:
    """`if self.handle is None: self.handle = self.inner.register_forward_hook(...)` in forward: a one-time
    set-up that uses nothing of the call (only `self` and module-level names) moves to the end of
    `__init__`: it is done when the object is built instead of on its first call, and dynamo never sees it."""
    found = _culprit_stmt(s, loc)
    if found is None:
        return None
    where, tree, stmt = found
    fn = _func_at(tree, where.line)
    if fn is None or fn.name == "__init__":
        return None
    node = next((n for n in fn.body if isinstance(n, ast.If) and n.lineno <= where.line <= (n.end_lineno or n.lineno)),
                None)
    if node is None or node.orelse:
        return None
    attr = _lazy_attr(node.test)
    if attr is None:
        return None
    cls = next((c for c in ast.walk(tree) if isinstance(c, ast.ClassDef) and fn in c.body), None)
    init = next((f for f in cls.body if isinstance(f, ast.FunctionDef) and f.name == "__init__"), None) if cls else None
    if init is None or not init.args.args or init.args.args[0].arg != "self" or fn.args.args[:1] == [] \
            or fn.args.args[0].arg != "self":
        return None
    stores_attr = any(isinstance(n, ast.Attribute) and isinstance(n.ctx, ast.Store) and n.attr == attr
                      and isinstance(n.value, ast.Name) and n.value.id == "self" for n in ast.walk(node))
    if not stores_attr:
        return None
    rel = f"{_rel(where.path)}:{node.lineno}"
    body_locals = {n.id for st in node.body for n in ast.walk(st) if isinstance(n, ast.Name) and isinstance(n.ctx, ast.Store)}
    uses = {n.id for st in node.body for n in ast.walk(st) if isinstance(n, ast.Name) and isinstance(n.ctx, ast.Load)}
    lambda_params = {a.arg for n in ast.walk(node) if isinstance(n, (ast.Lambda, ast.FunctionDef))
                     for a in [*n.args.posonlyargs, *n.args.args, *n.args.kwonlyargs]}
    call_values = (_function_locals(fn) - {"self"} - body_locals) & (uses - lambda_params)
    if call_values:
        raise PlanError(f"{rel}: the set-up uses the call's own values ({', '.join(sorted(call_values))}): it "
                        "cannot be done in __init__")
    if any(isinstance(n, (ast.Return, ast.Yield, ast.YieldFrom, ast.Break, ast.Continue, ast.Raise, ast.Await))
           and _owner(fn, n) for st in node.body for n in ast.walk(st)):
        return None
    if any(isinstance(st, ast.Expr) and isinstance(st.value, ast.Call) and _root_name(st.value.func) not in ("self",)
           for st in ast.walk(node) if isinstance(st, ast.stmt)):
        return None  # `print(...)`, `logger.info(...)` in the block: a report of the first call, not a set-up
    if _RANDOM_DRAW.search(ast.unparse(node)):
        raise PlanError(f"{rel}: the set-up draws random numbers: done in __init__ it would draw earlier and "
                        "change what the program computes")
    clash = body_locals & (_function_locals(init) - {"self"})
    if clash:
        raise PlanError(f"{rel}: the set-up's names ({', '.join(sorted(clash))}) are __init__'s own")
    last = init.body[-1]
    if isinstance(last, ast.Return) or any(isinstance(n, ast.Return) and _owner(init, n) for n in ast.walk(init)):
        raise PlanError(f"`{cls.name}.__init__` returns early: put the set-up there by hand")
    text = _read(where.path)
    lines = _lines(text)
    nl = _newline(text)
    l0, l1 = node.lineno - 1, (node.end_lineno or node.lineno) - 1
    if lines[l0][: node.col_offset].strip() or _same_line_tail(lines[l1], node):
        raise PlanError("the set-up shares its line with another statement")
    block = lines[l0 : l1 + 1]
    src_indent = _indent_of(block[0])
    dst_indent = _indent_of(lines[init.body[0].lineno - 1])
    moved = [dst_indent + ln[len(src_indent):] if ln.startswith(src_indent) else ln for ln in block]
    if not moved[-1].endswith(("\n", "\r")):
        moved[-1] += nl
    note = dst_indent + fill(_need("move-to-init", s.torch), function=fn.name, line=str(node.lineno)) + nl
    at = last.end_lineno or last.lineno  # after __init__'s last statement
    # moved, not copied: left in forward, its test would read the attribute, and dynamo cannot always
    # represent what the set-up stored there (a hook's RemovableHandle, made in another frame)
    rest = [_indent_of(lines[l0]) + "pass" + nl] if all(st is node for st in fn.body) else []
    if at <= l0:
        new_lines = lines[:at] + [note] + moved + lines[at:l0] + rest + lines[l1 + 1 :]
    else:
        new_lines = lines[:l0] + rest + lines[l1 + 1 : at] + [note] + moved + lines[at:]
    new_text = "".join(new_lines)
    try:
        ast.parse(new_text)
    except SyntaxError:
        raise PlanError(f"{rel}: the set-up cannot be copied into __init__ as it is") from None
    return Plan("move-to-init", f"Move the one-time set-up at {rel} to `{cls.name}.__init__`",
                (f"{rel}: `if {ast.unparse(node.test)}:` and its block move from `{fn.name}` to the end of "
                 f"`{cls.name}.__init__`: the set-up happens when the object is built instead of on the first "
                 "call, and dynamo never traces it",)
                + ((where.moved,) if where.moved else ()),
                (FileEdit(where.path, text, new_text),), f"move-to-init:{where.path}:{node.lineno}", s.diagnosis.id,
                s.diagnosis.signature)


# --- an opaque op over lines of the user's function ---------------------------------------------------------

_NOT_TENSOR_CALLS = frozenset({"len", "int", "float", "bool", "str", "max", "min", "sum", "round", "abs", "range",
                               "list", "tuple", "dict", "set", "sorted", "enumerate", "zip", "isinstance"})
_NOT_TENSOR_METHODS = frozenset({"item", "tolist", "size", "dim", "numel", "data_ptr", "is_contiguous", "stride"})
_PY_TYPES = {bool: "bool", int: "int", float: "float", str: "str"}
_TORCH_NOT_TENSOR = frozenset({"is_tensor", "numel", "is_floating_point", "is_complex", "get_default_dtype", "device",
                               "finfo", "iinfo", "manual_seed", "seed", "initial_seed", "is_grad_enabled", "no_grad",
                               "enable_grad", "inference_mode", "set_grad_enabled", "compile", "typename",
                               "is_inference_mode_enabled", "get_num_threads", "autocast"})


def _value_dependent() -> list[str]:
    """shapes.toml's torch functions whose output shape depends on the input's values."""
    return list(_load_toml(_patches_dir() / "shapes.toml").get("value_dependent", {}).get("names", []))


def _tensorish(v: ast.expr | None, tensors: set[str], torch_names: set[str]) -> bool:
    """Whether an expression makes a tensor, as far as its form says: a torch call (`torch.ones(n)`,
    `torch.from_numpy(a)`), a tensor's method or operator, a tensor's element. Not a conversion to a Python
    value (`x.item()`, `x.tolist()`, `x.shape`), nor a call of anything else (`Counter(x.tolist())`)."""
    if isinstance(v, ast.Name):
        return v.id in tensors
    if isinstance(v, ast.Call):
        f = v.func
        if isinstance(f, ast.Attribute):
            if isinstance(f.value, ast.Name) and f.value.id == "self" and f"self.{f.attr}()" in tensors:
                return True  # `self.head(h)`: a submodule __init__ built (torch.nn.Linear), called
            dotted = _dotted(f)
            if dotted is not None and dotted.split(".")[0] in torch_names:
                # torch.ones, torch.nn.functional.pad, torch.linalg.norm: not a class (torch.Generator), not a
                # query or a mode (torch.is_tensor, torch.cuda.*, torch.no_grad)
                space = dotted.split(".")[1:-1]
                return f.attr[:1].islower() and f.attr not in _TORCH_NOT_TENSOR and \
                    space in ([], ["nn", "functional"], ["fft"], ["linalg"], ["special"], ["nested"])
            return f.attr not in _NOT_TENSOR_METHODS and _tensorish(f.value, tensors, torch_names)
        return False
    if isinstance(v, ast.BinOp):
        return _tensorish(v.left, tensors, torch_names) or _tensorish(v.right, tensors, torch_names)
    if isinstance(v, ast.UnaryOp):
        return not isinstance(v.op, ast.Not) and _tensorish(v.operand, tensors, torch_names)
    if isinstance(v, ast.Subscript):
        return _tensorish(v.value, tensors, torch_names)
    if isinstance(v, ast.Attribute):
        if isinstance(v.value, ast.Name) and v.value.id == "self":
            return f"self.{v.attr}" in tensors  # a buffer or Parameter the object keeps
        return v.attr in ("T", "mT", "H", "mH", "real", "imag", "data") and _tensorish(v.value, tensors, torch_names)
    if isinstance(v, ast.IfExp):
        return _tensorish(v.body, tensors, torch_names) and _tensorish(v.orelse, tensors, torch_names)
    return False


def _assigns_in_order(stmts: list[ast.stmt]) -> list[tuple[str, ast.expr]]:
    out: list[tuple[str, ast.expr]] = []
    for st in stmts:
        for n in ast.walk(st):
            if isinstance(n, ast.Assign) and len(n.targets) == 1 and isinstance(n.targets[0], ast.Name):
                out.append((n.targets[0].id, n.value))
            elif isinstance(n, ast.AugAssign) and isinstance(n.target, ast.Name):
                out.append((n.target.id, n.value))
    return sorted(out, key=lambda a: (a[1].lineno, a[1].col_offset))


def _tail_call(body: list[ast.stmt], end: int, name: str, tensors: set[str], torch_names: set[str]) -> ast.Call | None:
    """The one call in the statement after body[end] that takes every use of `name` (an object made for it: a
    generator, a numpy RNG), when that call makes a tensor and nothing later reads `name`."""
    if end + 1 >= len(body):
        return None
    nxt = body[end + 1]
    if not isinstance(nxt, (ast.Assign, ast.AugAssign, ast.AnnAssign, ast.Return, ast.Expr)):
        return None
    if any(isinstance(n, ast.Name) and n.id == name for st in body[end + 2 :] for n in ast.walk(st)):
        return None
    uses = [n for n in ast.walk(nxt) if isinstance(n, ast.Name) and n.id == name]
    if not uses:
        return None
    best: ast.Call | None = None
    for c in ast.walk(nxt):
        if isinstance(c, ast.Call) and all(any(u is n for n in ast.walk(c)) for u in uses):
            if best is None or any(c is n for n in ast.walk(best)):
                best = c  # the innermost call that holds every use
    if best is None or not _tensorish(best, tensors, torch_names):
        return None
    return best


def _python_type_of(name: str, stmts: list[ast.stmt]) -> str | None:
    """`n = x.shape[0]`, `n = len(ids)`, `k = int(...)`: a local every assignment of which makes an int (or
    a float: `float(...)`)."""
    kinds: set[str] = set()
    for target, v in _assigns_in_order(stmts):
        if target != name:
            continue
        if isinstance(v, ast.Call) and isinstance(v.func, ast.Name) and v.func.id in ("len", "int", "float"):
            kinds.add("float" if v.func.id == "float" else "int")
        elif isinstance(v, ast.Call) and isinstance(v.func, ast.Attribute) and v.func.attr in ("numel", "dim") \
                or isinstance(v, ast.Call) and isinstance(v.func, ast.Attribute) and v.func.attr == "size" and v.args:
            kinds.add("int")
        elif isinstance(v, ast.Subscript) and isinstance(v.value, ast.Attribute) and v.value.attr == "shape" \
                and not isinstance(v.slice, ast.Slice):
            kinds.add("int")
        elif isinstance(v, ast.Constant) and type(v.value) in _PY_TYPES:
            kinds.add(_PY_TYPES[type(v.value)])
        else:
            return None
    return kinds.pop() if len(kinds) == 1 else None


def _init_attr_type(cls: ast.ClassDef, attr: str) -> str | None:
    """The type of `self.<attr>` as __init__ sets it: a literal, or a parameter with a literal default or a plain
    annotation (`self.vocab = vocab` with `vocab=12`: int); a tensor for a registered buffer, a Parameter or a
    torch call's result."""
    init = next((f for f in cls.body if isinstance(f, ast.FunctionDef) and f.name == "__init__"), None)
    if init is None:
        return None
    a = init.args
    params = [*a.posonlyargs, *a.args]
    defaults = dict(zip([p.arg for p in params[len(params) - len(a.defaults):]], a.defaults))
    defaults.update({p.arg: d for p, d in zip(a.kwonlyargs, a.kw_defaults) if d is not None})
    anns = {p.arg: p.annotation for p in [*params, *a.kwonlyargs] if p.annotation is not None}
    found: list[str | None] = []
    torch_names = {"torch"}
    for n in ast.walk(init):
        if isinstance(n, ast.Call) and isinstance(n.func, ast.Attribute) and n.func.attr == "register_buffer" \
                and isinstance(n.func.value, ast.Name) and n.func.value.id == "self" and n.args \
                and isinstance(n.args[0], ast.Constant) and n.args[0].value == attr:
            found.append("torch.Tensor")  # self.register_buffer("scale", torch.ones(n))
        if isinstance(n, ast.Assign) and any(isinstance(t, ast.Attribute) and isinstance(t.value, ast.Name)
                                             and t.value.id == "self" and t.attr == attr for t in n.targets):
            v = n.value
            if isinstance(v, ast.Call) and (_dotted(v.func) or "").endswith("nn.Parameter") \
                    or _tensorish(v, set(), torch_names):
                found.append("torch.Tensor")  # a Parameter or a tensor the object keeps
            elif isinstance(v, ast.Constant) and type(v.value) in _PY_TYPES:
                found.append(_PY_TYPES[type(v.value)])
            elif isinstance(v, ast.Name) and v.id in anns and ast.unparse(anns[v.id]) in _PY_TYPES.values():
                found.append(ast.unparse(anns[v.id]))
            elif isinstance(v, ast.Name) and isinstance(defaults.get(v.id), ast.Constant) \
                    and type(defaults[v.id].value) in _PY_TYPES:  # type: ignore[union-attr]
                found.append(_PY_TYPES[type(defaults[v.id].value)])  # type: ignore[union-attr]
            else:
                found.append(None)
    if len(set(found)) != 1:
        return None
    return found[0]


def _init_submodules(cls: ast.ClassDef, tree: ast.Module) -> set[str]:
    """The attributes __init__ sets to a module it builds: `self.head = torch.nn.Linear(d, v)`, `nn.Sequential(...)`,
    or a class of this file whose bases name a Module; calling one makes a tensor."""
    init = next((f for f in cls.body if isinstance(f, ast.FunctionDef) and f.name == "__init__"), None)
    if init is None:
        return set()
    local = {c.name for c in tree.body if isinstance(c, ast.ClassDef)
             and any((_dotted(b) or "").split(".")[-1] == "Module" for b in c.bases)}
    found: dict[str, bool] = {}
    for n in ast.walk(init):
        if isinstance(n, ast.Assign):
            for t in n.targets:
                if isinstance(t, ast.Attribute) and isinstance(t.value, ast.Name) and t.value.id == "self":
                    v = n.value
                    dotted = (_dotted(v.func) or "") if isinstance(v, ast.Call) else ""
                    last = dotted.split(".")[-1]
                    ok = bool(last[:1].isupper()) and last not in ("ModuleList", "ModuleDict", "ParameterList",
                                                                   "ParameterDict", "Parameter") and (
                        dotted.startswith(("torch.nn.", "nn.")) or dotted in local)
                    found[t.attr] = found.get(t.attr, True) and ok
    return {k for k, ok in found.items() if ok}


def _tensor_operands(e: ast.expr) -> list[str]:
    """The names an argument is computed from as a tensor operand: `x` in `x`, `x * noise`, `-x`, `x[rows]`."""
    if isinstance(e, ast.Name):
        return [e.id]
    if isinstance(e, ast.BinOp):
        return _tensor_operands(e.left) + _tensor_operands(e.right)
    if isinstance(e, ast.UnaryOp) and not isinstance(e.op, ast.Not):
        return _tensor_operands(e.operand)
    if isinstance(e, ast.Subscript):
        return _tensor_operands(e.value)
    return []


def _isolated_shim_note() -> str:
    return ("the object's own state (`self.<attr>` the lines read or change: a container, a random.Random, a "
            "submodule) is reached through a weak handle the object registers in `__init__`; the derived fake "
            "runs the lines on a copy of the object that shares its tensors, so tracing changes none of its state")


class _SelfToParam(ast.NodeTransformer):
    def __init__(self, names: dict[str, str]) -> None:
        self.names = names

    def visit_Attribute(self, node: ast.Attribute) -> ast.expr:
        if isinstance(node.value, ast.Name) and node.value.id == "self" and node.attr in self.names:
            return ast.copy_location(ast.Name(self.names[node.attr], ast.Load()), node)
        self.generic_visit(node)
        return node


_PURE_READS = frozenset({"len", "sorted", "list", "tuple", "set", "frozenset", "isinstance", "str", "repr", "id",
                         "hash", "sum", "min", "max", "any", "all", "enumerate", "zip", "iter", "bool", "int",
                         "float", "deepcopy", "copy", "getsizeof", "dict", "reversed", "type", "bisect",
                         "bisect_left", "bisect_right", "nsmallest", "nlargest", "index", "map", "filter"})
_READ_METHODS = frozenset({"get", "keys", "values", "items", "copy", "count", "index", "__contains__"})


def _plan_region_op(s: Situation, loc: Locator) -> Plan | None:
    """`counts = collections.Counter(tokens.tolist())` ... `factors[tok] = ...`, then `return logits * factors`:
    the statements of the function, from the one dynamo could not trace, that compute in Python (a tolist()
    into a Counter, a numpy generator made and drawn from, a loop that stops on .item(), a heapq free list, a
    hash of the bytes) the tensors the rest of the function uses (or what it returns). They become a function
    of the module, called as an opaque custom op: at run time the same Python computes the same values, and
    dynamo sees one node. The op takes the function's tensors and numbers and the plain numbers, strings and
    tensors the object keeps; when the lines use the object's own state (a container they change, a
    random.Random they draw from, a submodule they call), the op reaches the object through a handle it
    registers in __init__, and the derived fake runs the lines on a copy of it, so tracing changes none of
    its state. Never when the lines change a tensor in place that they did not make (an input, a buffer), nor
    state that the rest of the function reads too."""
    if s.caller is not None:
        return None  # the culprit is in a library the user's code calls: its entry call is the op to make
    found = _culprit_stmt(s, loc)
    if found is None:
        return None
    where, tree, _ = found
    if "site-packages" in where.path or "dist-packages" in where.path:
        return None
    fn = _func_at(tree, where.line)
    if fn is None or isinstance(fn, ast.AsyncFunctionDef) or _top_level_of(tree, fn.lineno) is None:
        return None
    body = fn.body
    idx = next((i for i, st in enumerate(body) if st.lineno <= where.line <= (st.end_lineno or st.lineno)), None)
    if idx is None:
        return None
    rel = f"{_rel(where.path)}:{where.line}"
    a = fn.args
    if a.vararg or a.kwarg or a.kwonlyargs:
        return None
    params = [p for p in [*a.posonlyargs, *a.args]]
    is_method = bool(params) and params[0].arg == "self"
    if is_method:
        params = params[1:]
    defaults = dict(zip([p.arg for p in params[len(params) - len(a.defaults):]], a.defaults)) if a.defaults else {}
    torch_names = {k for k, v in _import_aliases(tree).items() if v == "torch"}
    module_names = {k for k in _import_aliases(tree)} | {
        n.name for n in tree.body if isinstance(n, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef))} | {
        t.id for n in tree.body if isinstance(n, (ast.Assign, ast.AnnAssign))
        for t in (n.targets if isinstance(n, ast.Assign) else [n.target]) if isinstance(t, ast.Name)}
    cls = next((c for c in ast.walk(tree) if isinstance(c, ast.ClassDef) and fn in c.body), None) if is_method else None

    # what the function knows to be tensors: the submodules __init__ builds (called, they make one), the
    # tensors the object keeps, the parameters used as tensors, and the locals made from them
    base: set[str] = set()
    if cls is not None:
        base |= {f"self.{m}()" for m in _init_submodules(cls, tree)}
        base |= {f"self.{n.attr}" for n in ast.walk(fn) if isinstance(n, ast.Attribute)
                 and isinstance(n.value, ast.Name) and n.value.id == "self"
                 and _init_attr_type(cls, n.attr) == "torch.Tensor"}

    # what each parameter is: the type its annotation or default says, else a tensor when the function uses
    # an attribute of it (`x.shape`, `x.pow(2)`) or passes it, as an operand, to what makes a tensor
    # (`self.head(h)`, `torch.empty_like(x)`, `self.gate(x * noise)`)
    def param_type(p: ast.arg) -> str | None:
        if p.annotation is not None:
            ann = ast.unparse(p.annotation)
            return "torch.Tensor" if ann in ("Tensor", "torch.Tensor") else ann if ann in _PY_TYPES.values() else None
        d = defaults.get(p.arg)
        if isinstance(d, ast.Constant) and type(d.value) in _PY_TYPES:
            return _PY_TYPES[type(d.value)]
        if any(isinstance(n, ast.Attribute) and isinstance(n.value, ast.Name) and n.value.id == p.arg
               for st in body for n in ast.walk(st)):
            return "torch.Tensor"
        if d is None and any(isinstance(n, ast.Call) and _tensorish(n, base, torch_names)
                             and any(p.arg in _tensor_operands(x) for x in n.args)
                             for st in body for n in ast.walk(st)):
            return "torch.Tensor"
        return None

    base |= {p.arg for p in params if param_type(p) == "torch.Tensor"}

    def known_upto(end: int) -> set[str]:
        known = set(base)
        for _ in range(2):  # twice: a loop may make a name before the line that reads it
            for name, v in _assigns_in_order(body[: end + 1]):
                if _tensorish(v, known, torch_names):
                    known.add(name)
        return known

    def first_store(name: str, region: list[ast.stmt]) -> tuple[int, int]:
        return min(((n.lineno, n.col_offset) for st in region for n in ast.walk(st)
                    if isinstance(n, ast.Name) and n.id == name and isinstance(n.ctx, ast.Store)), default=(0, 0))

    def stored_here(stmts: list[ast.stmt]) -> set[str]:
        return {n.id for st in stmts for n in ast.walk(st) if isinstance(n, ast.Name) and isinstance(n.ctx, ast.Store)}

    def self_attrs(stmts: list[ast.AST]) -> dict[str, bool]:
        """`self.<attr>` the statements use, and whether they may change it (a store, a del, a call that is no
        plain read: `heapq.heappop(self.free)`, `self.rng.uniform(...)`; calling a submodule is a read)."""
        par = {id(c): p for st in stmts for p in ast.walk(st) for c in ast.iter_child_nodes(p)}
        out: dict[str, bool] = {}
        for st in stmts:
            for n in ast.walk(st):
                if not (isinstance(n, ast.Attribute) and isinstance(n.value, ast.Name) and n.value.id == "self"):
                    continue
                up = par.get(id(n))
                changed = not isinstance(n.ctx, ast.Load)
                if isinstance(up, (ast.Subscript, ast.Attribute)) and up.value is n \
                        and not isinstance(up.ctx, ast.Load):
                    changed = True
                if isinstance(up, ast.Attribute) and up.value is n:
                    call = par.get(id(up))
                    if isinstance(call, ast.Call) and call.func is up and up.attr not in _READ_METHODS:
                        changed = True
                if isinstance(up, ast.Call) and up.func is not n and (_terminal(up.func) or "") not in _PURE_READS:
                    changed = True
                out[n.attr] = out.get(n.attr, False) or changed
        return out

    start = idx
    for _ in range(len(body)):
        # the region's end: the first statement after which every value it makes that is read further on is a
        # tensor (or it reaches the function's last statement, a return of tensors)
        choice = None
        tensors: set[str] = set(base)
        for end in range(start, len(body)):
            region = body[start : end + 1]
            last_ret = end == len(body) - 1 and isinstance(body[end], ast.Return)
            inner = region[:-1] if last_ret else region
            if any(isinstance(n, (ast.Return, ast.Yield, ast.YieldFrom, ast.Global, ast.Nonlocal, ast.Await))
                   for st in inner for n in ast.walk(st)) or last_ret and any(
                    isinstance(n, (ast.Yield, ast.YieldFrom, ast.Await)) for n in ast.walk(body[end])):
                break
            tensors = known_upto(end)
            if last_ret:
                v = body[end].value  # type: ignore[attr-defined]
                vals = v.elts if isinstance(v, ast.Tuple) else [v]
                if v is not None and vals and all(_tensorish(e, tensors, torch_names) for e in vals):
                    choice = (end, [], None, True)
                break
            stored = {n.id for st in region for n in ast.walk(st) if isinstance(n, ast.Name) and isinstance(n.ctx, ast.Store)}
            after = {n.id for st in body[end + 1 :] for n in ast.walk(st) if isinstance(n, ast.Name) and isinstance(n.ctx, ast.Load)}
            outs = stored & after
            if outs and all(o in tensors for o in outs) and len(outs) <= 8:
                choice = (end, sorted(outs, key=lambda o: first_store(o, region)), None, False)
                break
            if len(outs) == 1:
                out1 = next(iter(outs))
                made = [v for name, v in _assigns_in_order(region) if name == out1]
                # an object built by a call (a generator, an RNG), not a container whose length the values
                # may decide (`rows = [kv[i] for i in range(int(n.item()))]`)
                tail = _tail_call(body, end, out1, tensors, torch_names) \
                    if len(made) == 1 and isinstance(made[0], ast.Call) else None
                if tail is not None:
                    # `g = torch.Generator().manual_seed(s)`, then `... torch.randn(x.shape, generator=g)`: the
                    # object is made only for that call, whose tensor comes out
                    choice = (end, [out1], tail, False)
                    break
        if choice is None:
            raise PlanError(f"{rel}: no run of statements from here computes one tensor (or several) the rest of "
                            f"`{fn.name}` uses: make an opaque op of that computation by hand")
        end, outs, tail, ret = choice
        region = body[start : end + 1]
        before_locals = {n.id for st in body[:start] for n in ast.walk(st) if isinstance(n, ast.Name)
                         and isinstance(n.ctx, ast.Store)}
        parts: list[ast.AST] = [*region, *([tail] if tail is not None else [])]
        loads = [n for st in parts for n in ast.walk(st) if isinstance(n, ast.Name) and isinstance(n.ctx, ast.Load)]
        needed_earlier = [n.id for n in loads if n.id in before_locals and n.id not in {p.arg for p in params}]
        pulled = False
        if start > 0:
            prev = body[start - 1]
            prev_stores = {n.id for n in ast.walk(prev) if isinstance(n, ast.Name) and isinstance(n.ctx, ast.Store)}
            later = {n.id for st in body[end + 1 :] for n in ast.walk(st) if isinstance(n, ast.Name)}
            if needed_earlier and isinstance(prev, (ast.Assign, ast.AnnAssign)) and prev_stores & set(needed_earlier) \
                    and not prev_stores & later and not _tensorish(getattr(prev, "value", None), set(), torch_names) \
                    and not (prev_stores & tensors):
                # `rng = np.random.default_rng(0)` just before: a value only the region reads comes in with it
                start -= 1
                pulled = True
            elif cls is not None and not isinstance(prev, (ast.Return, ast.If, ast.For, ast.While, ast.With,
                                                         ast.Try, ast.FunctionDef, ast.ClassDef)):
                # `self.history.append(y)` just before the lines that trim `self.history`: state the lines
                # change comes in with the statement before that changes or reads it too
                changed = {k for k, c in self_attrs(parts).items() if c}
                if changed & set(self_attrs([prev])):
                    start -= 1
                    pulled = True
        if not pulled:
            break
    imported = {k for k, v in _import_aliases(tree).items() if v != "torch" and k not in torch_names}
    python_part = any(isinstance(n, ast.Call) and not _tensorish(n, tensors, torch_names)
                      or isinstance(n, (ast.If, ast.For, ast.While, ast.Compare, ast.ListComp, ast.DictComp,
                                        ast.SetComp, ast.GeneratorExp))
                      or isinstance(n, ast.Name) and n.id in imported
                      for st in parts for n in ast.walk(st))
    # the inputs: the function's parameters and earlier tensors it reads, plain attributes of self
    param_names = {p.arg: p for p in params}
    inputs: list[tuple[str, str]] = []
    for n in loads:
        if any(n.id == x for x, _ in inputs):
            continue
        if n.id in param_names:
            typ = param_type(param_names[n.id])
        elif n.id in before_locals:
            typ = "torch.Tensor" if n.id in tensors else _python_type_of(n.id, body[:start])
        else:
            continue
        if typ is None:
            raise PlanError(f"{rel}: the lines read `{n.id}`, whose type crashlens cannot tell: make an opaque op by hand")
        inputs.append((n.id, typ))
    used = self_attrs(parts)
    attrs: list[tuple[str, str]] = []  # passed to the op: plain values and tensors the object keeps
    objects: set[str] = set()  # reached through the object: its containers, generators, submodules
    parents = {id(c): p for st in parts for p in ast.walk(st) for c in ast.iter_child_nodes(p)}
    for st in parts:
        for n in ast.walk(st):
            if not (isinstance(n, ast.Name) and n.id == "self"):
                continue
            par = parents.get(id(n))
            if not isinstance(par, ast.Attribute) or cls is None:
                raise PlanError(f"{rel}: the lines use the object itself (`self`): make an opaque op by hand")
            up = parents.get(id(par))
            typ = _init_attr_type(cls, par.attr)
            if typ == "torch.Tensor":
                if used.get(par.attr) and not (isinstance(up, ast.Attribute) and up.value is par
                                               and isinstance(up.ctx, ast.Load)):
                    raise PlanError(f"{rel}: the lines change `self.{par.attr}`, a tensor the object keeps: an "
                                    "opaque op may not")
                if all(x != par.attr for x, _ in attrs):
                    attrs.append((par.attr, typ))
            elif typ is not None and isinstance(par.ctx, ast.Load) and not (
                    isinstance(up, ast.Call) and up.func is par or isinstance(up, (ast.Attribute, ast.Subscript))
                    and up.value is par):
                if all(x != par.attr for x, _ in attrs):
                    attrs.append((par.attr, typ))
            else:
                objects.add(par.attr)
    if objects:
        init = next((f for f in cls.body if isinstance(f, ast.FunctionDef) and f.name == "__init__"), None) \
            if cls is not None else None
        if init is None or any(isinstance(n, ast.Return) for n in ast.walk(init)):
            raise PlanError(f"{rel}: the lines use the object's own state (`self.{sorted(objects)[0]}`) and its "
                            "class has no plain `__init__` to register it in: make an opaque op by hand")
        changed = {k for k in objects if used.get(k)}
        rest = [st for st in body if not any(st is r for r in region)]
        outside = changed & set(self_attrs(list(rest)))
        if outside:
            raise PlanError(f"{rel}: the lines change `self.{sorted(outside)[0]}`, which `{fn.name}` also uses "
                            "outside them: dynamo would not see the change: make an opaque op by hand")
    # state of the module the lines change (a generator they advance, a list they append to, a counter): the
    # op would change it as eager does, but the derived fake, run while tracing, would change it too
    module_vars: dict[str, bool] = {}  # name -> whether its value is a container or an iterator (mutable state)
    gens = {f.name for f in tree.body if isinstance(f, ast.FunctionDef) and _is_generator(f)}
    for n in tree.body:
        if isinstance(n, (ast.Assign, ast.AnnAssign, ast.AugAssign)):
            v = n.value
            mutable = isinstance(v, (ast.List, ast.Dict, ast.Set, ast.ListComp, ast.DictComp, ast.SetComp,
                                     ast.GeneratorExp)) or isinstance(v, ast.Call) and (
                _terminal(v.func) in ("list", "dict", "set", "deque", "defaultdict", "Counter", "OrderedDict",
                                      "iter", "count", "cycle", "bytearray") or _terminal(v.func) in gens)
            for t in (n.targets if isinstance(n, ast.Assign) else [n.target]):
                if isinstance(t, ast.Name):
                    module_vars[t.id] = module_vars.get(t.id, False) or mutable
    for st in parts:
        for n in ast.walk(st):
            if not (isinstance(n, ast.Name) and n.id in module_vars and n.id not in stored_here(region)):
                continue
            up = parents.get(id(n))
            name_of = (_terminal(up.func) or "") if isinstance(up, ast.Call) and up.func is not n else None
            hit = name_of == "next" or module_vars[n.id] and name_of is not None and name_of not in _PURE_READS
            if isinstance(up, ast.Attribute) and up.value is n and module_vars[n.id]:
                call = parents.get(id(up))
                hit = hit or isinstance(call, ast.Call) and call.func is up and up.attr not in _READ_METHODS
            if isinstance(up, (ast.Subscript, ast.Attribute)) and up.value is n and not isinstance(up.ctx, ast.Load):
                hit = True
            if hit:
                raise PlanError(f"{rel}: the lines change `{n.id}`, state of the module: the derived fake would "
                                "change it while tracing: make an opaque op with a fake by hand")
    for st in region:
        for n in ast.walk(st):
            if isinstance(n, ast.Attribute) and isinstance(n.value, ast.Name) and n.value.id == "self" \
                    and isinstance(n.ctx, ast.Store) and cls is not None \
                    and _init_attr_type(cls, n.attr) not in ("int", "float", "bool", "str"):
                # `self.weight = nn.Parameter(...)`, `self.last = y`: a tensor or object the lines would make
                # and keep behind dynamo's back (a lazy Parameter, a cache slot forward reads elsewhere)
                raise PlanError(f"{rel}: the lines set `self.{n.attr}` (not a plain number or string __init__ "
                                "sets): an opaque op may not keep it behind dynamo")
    # `n = int(t.max().item())`, then `for i in range(n)`: a loop bound the values choose (a paged gather):
    # the derived fake, run on zero-filled tensors, would take zero turns
    item_names = {name for name, v in _assigns_in_order(body[: end + 1]) if any(
        isinstance(c, ast.Call) and isinstance(c.func, ast.Attribute) and c.func.attr in ("item", "tolist")
        for c in ast.walk(v))}
    for st in region:
        for n in ast.walk(st):
            if isinstance(n, ast.Call) and isinstance(n.func, ast.Name) and n.func.id == "range" and any(
                    isinstance(c, ast.Name) and c.id in item_names or isinstance(c, ast.Call)
                    and isinstance(c.func, ast.Attribute) and c.func.attr == "item"
                    for x in n.args for c in ast.walk(x)):
                raise PlanError(f"{rel}: the lines loop `{ast.unparse(n)}` times, a count the tensor's values "
                                "choose: no fake can be derived from zero-filled tensors")
    input_names = {x for x, _ in inputs}
    dynamic = sorted({_terminal(n.func) or "" for st in parts for n in ast.walk(st) if isinstance(n, ast.Call)}
                     & set(_value_dependent()))
    if dynamic:
        raise PlanError(f"{rel}: the lines call `{dynamic[0]}`, whose output shape depends on the values: no fake "
                        "can give it")
    if not python_part:
        # `return q * cos`, `return x * step + 1`: tensor code dynamo traces (the crash is a device, a guard, a
        # recompile): nothing in the lines is Python an op would keep from it
        raise PlanError(f"{rel}: the lines are tensor code dynamo traces, no Python of their own: an opaque op "
                        "would not change what it fails on")
    for st in region:
        for n in ast.walk(st):
            if isinstance(n, (ast.Attribute, ast.Subscript)) and isinstance(n.ctx, ast.Store) \
                    and _root_name(n.value) in input_names:
                raise PlanError(f"{rel}: the lines change their input `{ast.unparse(n)}`: an opaque op may not")
            if isinstance(n, (ast.Attribute, ast.Subscript)) and isinstance(n.ctx, (ast.Store, ast.Del)) \
                    and _root_name(n.value) == "self" and not (
                        isinstance(n.value, ast.Attribute) and isinstance(n.value.value, ast.Name)
                        and n.value.attr in objects or isinstance(n.value, ast.Name) and n.attr in objects):
                raise PlanError(f"{rel}: the lines change `{ast.unparse(n)}`: an opaque op may not")
            if isinstance(n, ast.Call) and isinstance(n.func, ast.Attribute) and n.func.attr.endswith("_") \
                    and not n.func.attr.startswith("_") and _root_name(n.func.value) in input_names | {"self"}:
                raise PlanError(f"{rel}: the lines change their input in place (`{ast.unparse(n.func)}`)")
            if isinstance(n, ast.AugAssign) and isinstance(n.target, ast.Name) and n.target.id in input_names \
                    and n.target.id in {x for x, tp in inputs if tp == "torch.Tensor"}:
                raise PlanError(f"{rel}: the lines change their input `{n.target.id}` in place")
    stored_in_region = {n.id for st in region for n in ast.walk(st) if isinstance(n, ast.Name) and isinstance(n.ctx, ast.Store)}
    free = {n.id for n in loads} - input_names - stored_in_region - module_names - {"self"}
    import builtins

    free = {x for x in free if not hasattr(builtins, x)}
    if free:
        raise PlanError(f"{rel}: the lines read names of `{fn.name}` crashlens cannot pass ({', '.join(sorted(free))})")
    taken = input_names | stored_in_region | module_names | {"self"}
    rename = {at: (at if at not in taken else f"self_{at}") for at, _ in attrs}
    # the function the lines become, at module level after the function's own top-level statement
    text = _read(where.path)
    nl = _newline(text)
    name = f"{_ident(fn.name)}_lines_{region[0].lineno}"
    if name in module_names:
        raise PlanError(f"{rel}: the module already has a `{name}`")
    stmts = [_SelfToParam(rename).visit(ast.parse(ast.unparse(st)).body[0]) for st in region]
    if tail is not None:
        stmts.append(_SelfToParam(rename).visit(ast.parse("return " + ast.unparse(tail)).body[0]))
    sig_params = (["self"] if objects else []) + [f"{x}: {tp}" for x, tp in inputs] + \
        [f"{rename[at]}: {tp}" for at, tp in attrs]
    first, last = region[0].lineno, region[-1].end_lineno or region[-1].lineno
    if ret:
        v = region[-1].value  # type: ignore[attr-defined]
        n_out = len(v.elts) if isinstance(v, ast.Tuple) else 1
    else:
        n_out = len(outs)
    returns = "torch.Tensor" if n_out == 1 else "tuple[" + ", ".join("torch.Tensor" for _ in range(n_out)) + "]"
    func_lines = [f"def {name}({', '.join(sig_params)}) -> {returns}:",
                  "    " + fill(_need("region-op", s.torch), function=fn.name, first=str(first), last=str(last))]
    for st in stmts:
        func_lines += ["    " + ln for ln in ast.unparse(ast.fix_missing_locations(st)).split("\n")]
    if tail is None and not ret:
        func_lines.append(f"    return {', '.join(outs)}")
    lines = _lines(text)
    l0, l1 = first - 1, last - 1
    if lines[l0][: region[0].col_offset].strip() or _same_line_tail(lines[l1], region[-1]):
        raise PlanError("the lines share a line with another statement")
    indent = _indent_of(lines[l0])
    args_text = ", ".join((["self"] if objects else []) + [x for x, _ in inputs] + [f"self.{at}" for at, _ in attrs])
    if tail is None:
        lhs = "return " if ret else f"{', '.join(outs)} = "
        lines = lines[:l0] + [indent + f"{lhs}{name}({args_text})" + nl] + lines[l1 + 1 :]
    else:
        # the call that takes the object becomes the op's call, then the lines that made the object go
        lines = _lines(_replace_span("".join(lines), tail, f"{name}({args_text})"))
        lines = lines[:l0] + lines[l1 + 1 :]
    top = _top_level_of(ast.parse("".join(lines)), fn.lineno)
    if top is None:
        return None
    after_top = top.end_lineno or top.lineno
    lines = lines[:after_top] + [nl, nl] + [ln + nl for ln in func_lines] + lines[after_top:]
    text1 = "".join(lines)
    if not _has_torch_import(tree):
        text1 = _insert_after_imports(text1, [_need("torch-import", s.torch)], ast.parse(text1))
    tree1 = ast.parse(text1)
    call1 = next(n for n in ast.walk(tree1) if isinstance(n, ast.Call) and ast.unparse(n.func) == name)
    site = _stmt_at(tree1, call1.lineno)
    if site is None:
        return None
    newfn = next(n for n in tree1.body if isinstance(n, ast.FunctionDef) and n.name == name)
    module = module_of(s.culprit.file, source_root(s.diagnosis.chain)) if s.culprit else None
    qualified = f"{module or Path(where.path).stem}.{name}"
    what = ("what it returns" if ret else ", ".join(f"`{o}`" for o in outs)) if tail is None \
        else f"`{outs[0]}` and `{ast.unparse(tail)}`"
    note = (f"{_rel(where.path)}:{first}-{last}: the lines of `{fn.name}` that compute {what} in Python become "
            f"`{name}` (module level), run as an opaque custom op: the same code computes the same values at run "
            "time, and dynamo sees one node (for inference: no gradient flows through the op; training needs "
            "torch.library.register_autograd)")
    whole = region[0] is body[0] and ret
    if whole:
        note += (f"; the op is the whole body of `{fn.name}`: nothing in it is compiled (what calls it still is): "
                 "a person may prefer to move the Python part out of it")
    extra = (note,) + (((f"{_rel(where.path)}: {_isolated_shim_note()}"),) if objects else ()) \
        + ((where.moved,) if where.moved else ())
    return _opaque_call(s, where.path, call1.lineno, text1, site, call1, newfn, tree1, qualified, extra,
                        title=f"Run lines {first}-{last} of `{fn.name}` as an opaque custom op ({_rel(where.path)})",
                        original=text, check_values=True, handle_class=cls.name if objects and cls else None)


def _plan_plain_tensor(s: Situation, loc: Locator) -> Plan | None:
    """`w = torch.nn.Parameter(torch.ones(n))` in forward, then `x * w`: a Parameter made on every call is a new
    leaf that no module registers and no optimizer sees; the tensor it wraps gives the same values. Only
    when the name is read as a value (an operand, an argument of a torch function, a method's receiver, the
    return value), never stored on an object, kept in a container or registered."""
    found = _culprit_stmt(s, loc)
    if found is None:
        return None
    where, tree, stmt = found
    fn = _func_at(tree, where.line)
    if fn is None or fn.name == "__init__":
        return None
    if not (isinstance(stmt, ast.Assign) and len(stmt.targets) == 1 and isinstance(stmt.targets[0], ast.Name)
            and isinstance(stmt.value, ast.Call)):
        return None
    call = stmt.value
    name = _dotted(call.func) or ""
    aliases = _import_aliases(tree)
    root, _, rest = name.partition(".")
    canonical = aliases.get(root, root) + ("." + rest if rest else "")
    if canonical not in ("torch.nn.Parameter", "torch.nn.parameter.Parameter") or len(call.args) != 1 \
            or any(k.arg != "requires_grad" for k in call.keywords):
        return None
    target = stmt.targets[0].id
    rel = f"{_rel(where.path)}:{where.line}"
    parents = {id(c): p for p in ast.walk(fn) for c in ast.iter_child_nodes(p)}
    torch_names = {k for k, v in aliases.items() if v == "torch"}
    for n in ast.walk(fn):
        if not (isinstance(n, ast.Name) and n.id == target and isinstance(n.ctx, ast.Load)):
            continue
        par = parents.get(id(n))
        ok = isinstance(par, (ast.BinOp, ast.UnaryOp, ast.Return, ast.Compare)) \
            or isinstance(par, ast.Attribute) and isinstance(parents.get(id(par)), ast.Call) \
            or isinstance(par, ast.Call) and n in par.args and (_root_name(par.func) in torch_names
                                                              or isinstance(par.func, ast.Attribute)
                                                              and _root_name(par.func) not in ("self",))
        if not ok:
            raise PlanError(f"{rel}: `{target}` is kept or passed on (`{ast.unparse(par)}`): it may have to stay a "
                            "Parameter")
    if any(target in _stores(st) for st in _simple_stmts(fn) if st is not stmt):
        return None
    text = _read(where.path)
    inner = ast.unparse(call.args[0])
    new_text = _replace_span(text, call, inner)
    return Plan("plain-tensor", f"Use the tensor itself instead of a Parameter made in `{fn.name}` ({rel})",
                (f"{rel}: `{ast.unparse(call)}` becomes `{inner}`: a Parameter built on every call is a new leaf that "
                 "nothing registers or trains; the values are the same (its gradient, which nothing reads, is not "
                 "computed)",) + ((where.moved,) if where.moved else ()),
                (FileEdit(where.path, text, new_text),), f"plain-tensor:{where.path}:{stmt.lineno}", s.diagnosis.id,
                s.diagnosis.signature)


def _plan_where(s: Situation, loc: Locator) -> Plan | None:
    """`if <tensor condition>: x = a [else: x = b]` becomes `x = torch.where(<condition>, a, b or x)`."""
    found = _culprit_stmt(s, loc)
    if found is None:
        return None
    where, tree, stmt = found
    node = None
    for n in ast.walk(tree):
        if isinstance(n, ast.If) and n.lineno == where.line:
            node = n
    if node is None:
        return None
    fn = _func_at(tree, where.line)
    if fn is None:
        return None

    def single_assign(body: list[ast.stmt]) -> tuple[str, ast.expr] | None:
        if len(body) == 1 and isinstance(body[0], ast.Assign) and len(body[0].targets) == 1 \
                and isinstance(body[0].targets[0], ast.Name):
            return body[0].targets[0].id, body[0].value
        return None

    names = _loads(node.test)
    if names and names <= _stdlib_names(tree):
        # `if os.environ[...] == "1":` steers Python, not a tensor: torch.where cannot take it
        raise PlanError("the condition reads no tensor (only the standard library): torch.where cannot take it")
    stdlib = _stdlib_names(tree)
    probes = [c for c in ast.walk(node.test) if isinstance(c, ast.Call) and _root_name(c.func) in stdlib]
    if probes:
        # `if random.random() >= self.p:`: dynamo stopped at the call, not at a branch on a tensor; under
        # torch.where the same call is still traced
        raise PlanError(f"the condition calls `{ast.unparse(probes[0].func)}` (the standard library), which dynamo "
                        "cannot trace: torch.where would still call it")
    then = single_assign(node.body)
    if then is None:
        raise PlanError("the branch does more than assign one name: rewrite it with torch.where or torch.cond by hand")
    other = single_assign(node.orelse) if node.orelse else None
    if node.orelse and (other is None or other[0] != then[0]):
        raise PlanError("the two branches assign different things")
    target = then[0]
    if _copies_only(node, fn):
        raise PlanError("the branch only copies the tensor (the same values): torch.where has nothing to pick")
    if other is None and target not in _function_locals(fn):
        raise PlanError(f"`{target}` has no value when the branch is not taken")
    if other is None:
        before = [st for st in _simple_stmts(fn) if st.lineno < node.lineno and target in _stores(st)]
        params = {p.arg for p in [*fn.args.posonlyargs, *fn.args.args, *fn.args.kwonlyargs]}
        if not before and target not in params:
            raise PlanError(f"`{target}` has no value when the branch is not taken")
    if any(isinstance(n, (ast.Call)) and _terminal(n.func) in ("print", "append", "extend") for n in ast.walk(node)):
        raise PlanError("the branch has side effects")
    text = _read(where.path)
    lines = _lines(text)
    nl = _newline(text)
    l0, l1 = node.lineno - 1, (node.end_lineno or node.lineno) - 1
    indent = _indent_of(lines[l0])
    new = fill(_need("where", s.torch), target=target, cond=ast.unparse(_tensor_condition(node.test)),
               then=ast.unparse(then[1]),
               other=ast.unparse(other[1]) if other else target)
    new_text = "".join(lines[:l0] + [indent + new + nl] + lines[l1 + 1 :])
    if not _has_torch_import(tree):
        new_text = _insert_after_imports(new_text, [_need("torch-import", s.torch)], ast.parse(new_text))
    rel = f"{_rel(where.path)}:{where.line}"
    return Plan("where", f"Branch on the tensor condition at {rel} with torch.where instead of `if`",
                (f"{rel}: both sides are computed and torch.where picks per element; the result is the same "
                 "where the condition is a single boolean",),
                (FileEdit(where.path, text, new_text),), f"where:{where.path}:{node.lineno}", s.diagnosis.id,
                s.diagnosis.signature)


class _KeepTensor(ast.NodeTransformer):
    """A condition's conversions of a tensor into a Python value undone, so that it stays a tensor that
    torch.where can take: `t.item()` and `float(t)` become `t`, `bool(t)` becomes `t.bool()`, and `and`/`or`
    /`not` over comparisons become `&`/`|`/`~`. (`int(t)` truncates: it stays, and the plan fails later.)"""

    def visit_Call(self, node: ast.Call) -> ast.expr:
        self.generic_visit(node)
        if node.args or node.keywords:
            if isinstance(node.func, ast.Name) and len(node.args) == 1 and not node.keywords \
                    and not _literal(node.args[0]):
                if node.func.id == "float":
                    return node.args[0]
                if node.func.id == "bool":
                    return ast.Call(ast.Attribute(node.args[0], "bool", ast.Load()), [], [])
            return node
        if isinstance(node.func, ast.Attribute) and node.func.attr == "item":
            return node.func.value
        return node

    def visit_BoolOp(self, node: ast.BoolOp) -> ast.expr:
        self.generic_visit(node)
        if not all(isinstance(v, (ast.Compare, ast.BinOp, ast.UnaryOp)) for v in node.values):
            return node
        op: ast.operator = ast.BitAnd() if isinstance(node.op, ast.And) else ast.BitOr()
        out = node.values[0]
        for v in node.values[1:]:
            out = ast.BinOp(out, op, v)
        return out

    def visit_UnaryOp(self, node: ast.UnaryOp) -> ast.expr:
        self.generic_visit(node)
        if isinstance(node.op, ast.Not) and isinstance(node.operand, ast.Compare):
            return ast.UnaryOp(ast.Invert(), node.operand)
        return node


def _tensor_condition(test: ast.expr) -> ast.expr:
    import copy

    return ast.fix_missing_locations(_KeepTensor().visit(copy.deepcopy(test)))


_PLANNERS = {
    "register-fake": _plan_register_fake,
    "fix-fake": _plan_fix_fake,
    "custom-op": _plan_custom_op,
    "assume-constant": _plan_assume_constant,
    "move-import": _plan_move_import,
    "move-to-module": _plan_move_to_module,
    "move-to-init": _plan_move_to_init,
    "plain-tensor": _plan_plain_tensor,
    "where": _plan_where,
    "guard": _plan_guard,
    "region-op": _plan_region_op,
    "disable": _plan_disable,
}

__all__ = ["FileEdit", "Locator", "NoPlan", "Plan", "PlanError", "UserError", "eager_too", "forget_files",
           "is_stdlib", "is_torch", "plan_fix", "template"]
