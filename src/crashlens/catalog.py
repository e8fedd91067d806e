"""Loads the signature catalog (signatures/*.toml) once, validates it and compiles its patterns."""

from __future__ import annotations

import os
import sys
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import regex

if sys.version_info >= (3, 11):
    import tomllib
else:  # pragma: no cover - exercised on 3.10 only
    import tomli as tomllib

# A pathological log line must not hang a scan: every catalog pattern runs under this limit (seconds).
PATTERN_TIMEOUT = 0.25

FIX_KINDS = {"custom-op", "decorate", "precompute", "config", "flag", "upgrade", "workaround", "report", "rewrite"}
CONTEXTS = {"fullgraph", "graph-break", "unknown"}
MATCH_KEYS = {
    "exception", "message", "gb", "callee", "frames", "culprit_source", "kind", "not_message", "lead", "text",
}


class CatalogError(Exception):
    """A signature file is malformed; the message names the file, the field and the reason."""


@dataclass(frozen=True, slots=True)
class FixTemplate:
    rank: int
    kind: str
    title: str
    detail: str
    contexts: frozenset[str]
    servers: frozenset[str]  # empty: any server; "none" means plain torch
    modes: frozenset[str]
    safety: str
    file: str | None
    line: str | None
    requires: tuple[str, ...]


@dataclass(frozen=True, slots=True)
class Example:
    expect_match: bool
    text: str
    era: str
    origin: str
    fields: tuple[tuple[str, str], ...]


@dataclass(frozen=True, slots=True)
class Matcher:
    """Patterns per record field; all fields present must match (any pattern of a field)."""

    rules: tuple[tuple[str, tuple[Any, ...]], ...]
    dynamo: bool | None
    fatal: bool | None


@dataclass(frozen=True, slots=True)
class Signature:
    id: str
    name: str
    family: str
    title: str
    summary: str
    why: str
    priority: int
    confidence: float
    matcher: Matcher
    extract: tuple[Any, ...]
    fixes: tuple[FixTemplate, ...]
    examples: tuple[Example, ...]
    next: tuple[str, ...]
    path: str
    fuzzy_text: str  # what the fuzzy matcher compares against
    tags: tuple[str, ...] = ()


@dataclass(frozen=True, slots=True)
class LibraryRule:
    """Library-specific knowledge applied when the traced chain passes through that library."""

    id: str
    library: str
    title: str
    matcher: Matcher
    signatures: tuple[str, ...]  # only for these signatures (empty: any dynamo failure)
    fixes: tuple[FixTemplate, ...]
    next: tuple[str, ...]
    references: tuple[str, ...]
    priority: int
    path: str


@dataclass(frozen=True, slots=True)
class ServerFlag:
    server: str
    mode: str
    min_version: tuple[int, ...] | None
    max_version: tuple[int, ...] | None  # inclusive
    text: str


@dataclass(frozen=True, slots=True)
class ContextRule:
    """Evidence for the compile context: where a pattern matches, set these context fields."""

    id: str
    where: str  # "frames" | "text" | "facts"
    patterns: tuple[Any, ...]
    sets: tuple[tuple[str, Any], ...]
    evidence: str
    priority: int


@dataclass(frozen=True, slots=True)
class FactRule:
    trigger: str
    pattern: Any
    sets: tuple[tuple[str, str], ...]


@dataclass(slots=True)
class Catalog:
    signatures: list[Signature] = field(default_factory=list)
    libraries: list[LibraryRule] = field(default_factory=list)
    server_flags: list[ServerFlag] = field(default_factory=list)
    context_rules: list[ContextRule] = field(default_factory=list)
    facts: list[FactRule] = field(default_factory=list)
    callee_patterns: list[Any] = field(default_factory=list)
    version_hints: list[tuple[str, Any, str, str]] = field(default_factory=list)
    by_id: dict[str, Signature] = field(default_factory=dict)
    warnings: list[str] = field(default_factory=list)

    def get(self, sig_id: str) -> Signature | None:
        return self.by_id.get(sig_id)


def builtin_dir() -> Path:
    """The shipped catalog: next to the package when installed, or the repository's signatures/."""
    here = Path(__file__).resolve().parent
    packaged = here / "signatures"
    if packaged.is_dir():
        return packaged
    repo = here.parent.parent / "signatures"
    return repo


def compile_pattern(pat: str, where: str) -> Any:
    if not isinstance(pat, str):
        raise CatalogError(f"{where}: pattern must be a string, got {type(pat).__name__}")
    if _nested_unbounded(pat):
        raise CatalogError(f"{where}: pattern {pat!r} nests unbounded repetition (catastrophic backtracking risk)")
    try:
        return regex.compile(pat, regex.MULTILINE | regex.V0)
    except regex.error as e:
        raise CatalogError(f"{where}: pattern {pat!r} does not compile: {e}") from None


def _nested_unbounded(pat: str) -> bool:
    """True for shapes like (a+)+ or (a*)* or (.*x)*: a quantified group holding an unbounded repeat."""
    depth_unbounded: list[bool] = []
    i = 0
    n = len(pat)
    while i < n:
        c = pat[i]
        if c == "\\":
            i += 2
            continue
        if c == "[":
            j = i + 1
            if j < n and pat[j] == "]":
                j += 1
            while j < n and pat[j] != "]":
                j += 2 if pat[j] == "\\" else 1
            i = j + 1
            if i < n and pat[i] in "*+" and depth_unbounded:
                depth_unbounded[-1] = True
            continue
        if c == "(":
            depth_unbounded.append(False)
        elif c == ")":
            inner = depth_unbounded.pop() if depth_unbounded else False
            nxt = pat[i + 1] if i + 1 < n else ""
            quant = pat[i + 1 : pat.find("}", i + 1) + 1] if nxt == "{" else ""
            repeated = nxt != "" and (nxt in "*+" or quant.endswith(",}"))
            if inner and repeated:
                return True
            if depth_unbounded and (inner or repeated):
                depth_unbounded[-1] = True
        elif c in "*+" and depth_unbounded:
            depth_unbounded[-1] = True
        i += 1
    return False


def search(pattern: Any, text: str) -> Any:
    """Pattern search under the catalog time limit; a timeout counts as no match."""
    try:
        return pattern.search(text, timeout=PATTERN_TIMEOUT)
    except TimeoutError:
        _report_timeout(pattern.pattern)
        return None


_timed_out: set[str] = set()


def _report_timeout(pat: str) -> None:
    if pat not in _timed_out:
        _timed_out.add(pat)
        print(f"crashlens: warning: pattern {pat[:80]!r} timed out on a log line and was skipped", file=sys.stderr)


def _req(d: dict[str, Any], key: str, typ: type | tuple[type, ...], where: str) -> Any:
    if key not in d:
        raise CatalogError(f"{where}: missing field '{key}'")
    v = d[key]
    if not isinstance(v, typ):
        name = typ.__name__ if isinstance(typ, type) else "/".join(t.__name__ for t in typ)
        raise CatalogError(f"{where}: field '{key}' must be {name}")
    return v


def _str_list(v: Any, where: str) -> list[str]:
    if isinstance(v, str):
        return [v]
    if not isinstance(v, list) or not all(isinstance(x, str) for x in v):
        raise CatalogError(f"{where}: must be a string or a list of strings")
    return list(v)


def _matcher(d: dict[str, Any], where: str) -> Matcher:
    if not isinstance(d, dict):
        raise CatalogError(f"{where}: must be a table")
    rules = []
    dynamo = d.get("dynamo")
    fatal = d.get("fatal")
    for key, val in d.items():
        if key in ("dynamo", "fatal"):
            if not isinstance(val, bool):
                raise CatalogError(f"{where}.{key}: must be true or false")
            continue
        if key not in MATCH_KEYS:
            raise CatalogError(f"{where}.{key}: unknown match field (known: {', '.join(sorted(MATCH_KEYS))})")
        pats = tuple(compile_pattern(p, f"{where}.{key}") for p in _str_list(val, f"{where}.{key}"))
        rules.append((key, pats))
    return Matcher(tuple(rules), dynamo, fatal)


def _version(s: str | None, where: str) -> tuple[int, ...] | None:
    if s is None or s == "":
        return None
    try:
        return tuple(int(x) for x in s.split("."))
    except ValueError:
        raise CatalogError(f"{where}: version {s!r} is not dotted numbers") from None


def _fixes(items: Any, where: str) -> tuple[FixTemplate, ...]:
    if items is None:
        return ()
    if not isinstance(items, list):
        raise CatalogError(f"{where}: must be an array of tables ([[fixes]])")
    out = []
    for i, f in enumerate(items):
        w = f"{where}[{i}]"
        if not isinstance(f, dict):
            raise CatalogError(f"{w}: must be a table")
        kind = _req(f, "kind", str, w)
        if kind not in FIX_KINDS:
            raise CatalogError(f"{w}.kind: {kind!r} is not one of {', '.join(sorted(FIX_KINDS))}")
        contexts = frozenset(_str_list(f.get("contexts", sorted(CONTEXTS)), f"{w}.contexts"))
        bad = contexts - CONTEXTS
        if bad:
            raise CatalogError(f"{w}.contexts: unknown context {sorted(bad)[0]!r} (known: {', '.join(sorted(CONTEXTS))})")
        line = f.get("line")
        out.append(
            FixTemplate(
                rank=int(_req(f, "rank", int, w)),
                kind=kind,
                title=_req(f, "title", str, w),
                detail=str(f.get("detail", "")),
                contexts=contexts,
                servers=frozenset(_str_list(f.get("servers", []), f"{w}.servers")),
                modes=frozenset(_str_list(f.get("modes", []), f"{w}.modes")),
                safety=str(f.get("safety", "")),
                file=f.get("file"),
                line=None if line is None else str(line),
                requires=tuple(_str_list(f.get("requires", []), f"{w}.requires")),
            )
        )
    return tuple(out)


def _examples(items: Any, where: str) -> tuple[Example, ...]:
    if items is None:
        return ()
    if not isinstance(items, list):
        raise CatalogError(f"{where}: must be an array of tables ([[examples]])")
    out = []
    for i, e in enumerate(items):
        w = f"{where}[{i}]"
        if not isinstance(e, dict):
            raise CatalogError(f"{w}: must be a table")
        expect = _req(e, "expect", str, w)
        if expect not in ("match", "no-match"):
            raise CatalogError(f"{w}.expect: must be 'match' or 'no-match'")
        fields = e.get("fields", {})
        if not isinstance(fields, dict):
            raise CatalogError(f"{w}.fields: must be a table")
        out.append(
            Example(
                expect_match=expect == "match",
                text=_req(e, "text", str, w),
                era=str(e.get("era", "")),
                origin=str(e.get("origin", "")),
                fields=tuple((str(k), str(v)) for k, v in fields.items()),
            )
        )
    return tuple(out)


def _load_toml(path: Path) -> dict[str, Any]:
    try:
        with open(path, "rb") as fh:
            return tomllib.load(fh)
    except tomllib.TOMLDecodeError as e:
        raise CatalogError(f"{path}: not valid TOML: {e}") from None
    except OSError as e:
        raise CatalogError(f"{path}: cannot read: {e.strerror or e}") from None


def load_fixsets(path: Path) -> dict[str, tuple[FixTemplate, ...]]:
    """Named fix lists that several signatures share (`fixsets = ["opaque-op", ...]`)."""
    d = _load_toml(path)
    sets = d.get("sets", {})
    if not isinstance(sets, dict):
        raise CatalogError(f"{path}: field 'sets' must be a table of arrays")
    return {name: _fixes(items, f"{path}: sets.{name}") for name, items in sets.items()}


def load_signature(path: Path, fixsets: dict[str, tuple[FixTemplate, ...]] | None = None) -> Signature:
    d = _load_toml(path)
    w = str(path)
    fixes = _fixes(d.get("fixes"), f"{w}: fixes")
    for name in _str_list(d.get("fixsets", []), f"{w}: fixsets"):
        if fixsets is None or name not in fixsets:
            raise CatalogError(f"{w}: field 'fixsets': no fix set named {name!r} in _fixsets.toml")
        fixes = fixes + fixsets[name]
    sig_id = _req(d, "id", str, w)
    if not regex.fullmatch(r"[a-z0-9][a-z0-9-]*", sig_id):
        raise CatalogError(f"{w}: field 'id' must be kebab-case, got {sig_id!r}")
    extract = tuple(
        compile_pattern(p, f"{w}: extract") for p in _str_list(d.get("extract", []), f"{w}: extract")
    )
    title = _req(d, "title", str, w)
    summary = _req(d, "summary", str, w)
    return Signature(
        id=sig_id,
        name=str(d.get("name", sig_id)),
        family=str(d.get("family", "dynamo")),
        title=title,
        summary=summary,
        why=str(d.get("why", "")),
        priority=int(d.get("priority", 50)),
        confidence=float(d.get("confidence", 0.9)),
        matcher=_matcher(_req(d, "match", dict, w), f"{w}: match"),
        extract=extract,
        fixes=fixes,
        examples=_examples(d.get("examples"), f"{w}: examples"),
        next=tuple(_str_list(d.get("next", []), f"{w}: next")),
        path=w,
        fuzzy_text=" ".join(_str_list(d.get("fuzzy", []), f"{w}: fuzzy")) or title,
        tags=tuple(_str_list(d.get("tags", []), f"{w}: tags")),
    )


def load_library(path: Path) -> list[LibraryRule]:
    d = _load_toml(path)
    w = str(path)
    library = _req(d, "library", str, w)
    rules = d.get("rules", [])
    if not isinstance(rules, list) or not rules:
        raise CatalogError(f"{w}: field 'rules' must be a non-empty array of tables ([[rules]])")
    out = []
    for i, r in enumerate(rules):
        rw = f"{w}: rules[{i}]"
        if not isinstance(r, dict):
            raise CatalogError(f"{rw}: must be a table")
        out.append(
            LibraryRule(
                id=_req(r, "id", str, rw),
                library=library,
                title=str(r.get("title", "")),
                matcher=_matcher(_req(r, "match", dict, rw), f"{rw}.match"),
                signatures=tuple(_str_list(r.get("signatures", []), f"{rw}.signatures")),
                fixes=_fixes(r.get("fixes"), f"{rw}.fixes"),
                next=tuple(_str_list(r.get("next", []), f"{rw}.next")),
                references=tuple(_str_list(r.get("references", []), f"{rw}.references")),
                priority=int(r.get("priority", 50)),
                path=w,
            )
        )
    return out


def load_server(path: Path) -> list[ServerFlag]:
    d = _load_toml(path)
    w = str(path)
    server = _req(d, "server", str, w)
    out = []
    for i, f in enumerate(d.get("compile_off", [])):
        fw = f"{w}: compile_off[{i}]"
        out.append(
            ServerFlag(
                server=server,
                mode=_req(f, "mode", str, fw),
                min_version=_version(f.get("min_version"), f"{fw}.min_version"),
                max_version=_version(f.get("max_version"), f"{fw}.max_version"),
                text=_req(f, "text", str, fw),
            )
        )
    return out


def load_context(path: Path, cat: Catalog) -> None:
    d = _load_toml(path)
    w = str(path)
    for i, r in enumerate(d.get("rules", [])):
        rw = f"{w}: rules[{i}]"
        where = _req(r, "where", str, rw)
        if where not in ("frames", "text", "facts", "rank"):
            raise CatalogError(f"{rw}.where: must be frames, text, facts or rank")
        sets = _req(r, "set", dict, rw)
        cat.context_rules.append(
            ContextRule(
                id=_req(r, "id", str, rw),
                where=where,
                patterns=tuple(compile_pattern(p, f"{rw}.patterns") for p in _str_list(r.get("patterns", []), rw)),
                sets=tuple(sets.items()),
                evidence=str(r.get("evidence", "")),
                priority=int(r.get("priority", 50)),
            )
        )
    for i, f in enumerate(d.get("facts", [])):
        fw = f"{w}: facts[{i}]"
        cat.facts.append(
            FactRule(
                trigger=_req(f, "trigger", str, fw),
                pattern=compile_pattern(_req(f, "pattern", str, fw), f"{fw}.pattern"),
                sets=tuple((str(k), str(v)) for k, v in f.get("set", {}).items()),
            )
        )
    for i, c in enumerate(d.get("callee", [])):
        cw = f"{w}: callee[{i}]"
        pat = compile_pattern(_req(c, "pattern", str, cw), f"{cw}.pattern")
        groups = set(pat.groupindex)
        if not ({"callee"} <= groups or {"module", "qualname"} <= groups or {"cls", "method"} <= groups):
            raise CatalogError(f"{cw}.pattern: needs a (?P<callee>...) group, or module+qualname, or cls+method")
        cat.callee_patterns.append(pat)
    for i, v in enumerate(d.get("versions", [])):
        vw = f"{w}: versions[{i}]"
        cat.version_hints.append(
            (
                _req(v, "library", str, vw),
                compile_pattern(_req(v, "pattern", str, vw), f"{vw}.pattern"),
                str(v.get("version", "")),
                str(v.get("evidence", "")),
            )
        )


def load_catalog(extra_dirs: list[str] | None = None, builtin: bool = True) -> Catalog:
    """Built-in catalog first, then each extra dir; a later signature with the same id overrides."""
    cat = Catalog()
    dirs: list[Path] = [builtin_dir()] if builtin else []
    env = os.environ.get("CRASHLENS_SIGNATURES")
    extra = list(extra_dirs or [])
    if env:
        extra = [p for p in env.split(os.pathsep) if p] + extra
    for e in extra:
        p = Path(e)
        if not p.is_dir():
            raise CatalogError(f"{e}: signature directory not found")
        dirs.append(p)
    sigs: dict[str, Signature] = {}
    fixsets: dict[str, tuple[FixTemplate, ...]] = {}
    for n, base in enumerate(dirs):
        seen_here: dict[str, str] = {}
        fs_path = base / "_fixsets.toml"
        if fs_path.is_file():
            fixsets.update(load_fixsets(fs_path))
        for path in sorted(base.glob("*.toml")):
            if path.name.startswith("_") or path.name == "context.toml":
                continue
            sig = load_signature(path, fixsets)
            if sig.id in seen_here:
                raise CatalogError(f"{path}: field 'id': {sig.id!r} is also used by {seen_here[sig.id]}")
            seen_here[sig.id] = str(path)
            sigs[sig.id] = sig  # later directories override built-ins by id
        for path in sorted((base / "libraries").glob("*.toml")):
            new = load_library(path)
            ids = {r.id for r in new}
            cat.libraries = [r for r in cat.libraries if r.id not in ids] + new
        for path in sorted((base / "servers").glob("*.toml")):
            cat.server_flags.extend(load_server(path))
        ctx = base / "context.toml"
        if ctx.is_file():
            load_context(ctx, cat)
        if n == 0 and not seen_here and builtin:
            raise CatalogError(f"{base}: no signatures found (is crashlens installed correctly?)")
    cat.signatures = sorted(sigs.values(), key=lambda s: (-s.priority, s.id))
    cat.by_id = sigs
    cat.libraries.sort(key=lambda r: -r.priority)
    return cat


_CACHE: dict[tuple[str, ...], Catalog] = {}


def get_catalog(extra_dirs: list[str] | None = None) -> Catalog:
    key = tuple(extra_dirs or []) + (os.environ.get("CRASHLENS_SIGNATURES", ""),)
    cat = _CACHE.get(key)
    if cat is None:
        cat = _CACHE[key] = load_catalog(extra_dirs)
    return cat
