"""Loads the signature catalog (signatures/*.toml) once, validates it and compiles its patterns."""

from __future__ import annotations

import functools
import os
import re
import sys
from pathlib import Path

from . import recache
from ._struct import dataclass, field
from .errors import UserError

TYPE_CHECKING = False  # typing.TYPE_CHECKING without importing typing (~4 ms of start-up)
if TYPE_CHECKING:
    from typing import Any


def _tomllib() -> Any:
    """The TOML parser, imported on a cache miss only (the parsed catalog is usually cached)."""
    if sys.version_info >= (3, 11):
        import tomllib
    else:  # pragma: no cover - exercised on 3.10 only
        import tomli as tomllib
    return tomllib

# A pathological log line must not hang a scan: every catalog pattern runs under this limit (seconds).
PATTERN_TIMEOUT = 0.25
# A catalog file is read whole; these bound what a hostile or broken one can cost.
MAX_FILE_BYTES = 1024 * 1024
MAX_PATTERN_CHARS = 2000
# A bounded repeat this wide backtracks like an unbounded one when nested.
WIDE_REPEAT = 100

FIX_KINDS = {"custom-op", "decorate", "precompute", "config", "flag", "upgrade", "workaround", "report", "rewrite",
             "environment", "info"}
CONTEXTS = {"fullgraph", "graph-break", "unknown"}
MATCH_KEYS = {
    "exception", "message", "gb", "callee", "frames", "culprit_source", "kind", "not_message", "lead", "text",
    "raised_in", "culprit", "evidence", "innermost", "hint",
}
SIGNATURE_KEYS = {
    "id", "name", "family", "title", "summary", "why", "priority", "confidence", "tags", "fuzzy", "fixsets",
    "match", "extract", "next", "fixes", "examples", "compile_evidence",
}
FIX_KEYS = {"rank", "kind", "title", "detail", "contexts", "servers", "modes", "safety", "file", "line", "requires",
            "fallback", "when", "compile_off"}
# Conditions a fix can put on the crash (`when = { culprit_owner = [...], call_shape = [...], torch = ">=2.4" }`).
WHEN_KEYS = {"culprit_owner", "call_shape", "torch", "eager_too", "dynamo_hint", "callee_below"}
# What a 2.7+ `Hint:` line of dynamo's message is (context.toml [[hints]]; a hint no row names is "advice"):
# advice the user can follow; "eager-error" (the code would raise uncompiled too); "generic" (it only says
# not to make the call it rejected, "Avoid calling `X`": a fix that names where and how to do without it
# comes first); "unsafe" (a setting dynamo itself says may give wrong results: never the first fix);
# "dynamo-bug"; "no-advice"
# (report it if frequent, hard to debug, fundamental, caused by an earlier break); "forbidden" (advice crashlens
# never gives as a fix: fullgraph=False, suppress_errors, disabling compilation).
HINT_KINDS = ("eager-error", "advice", "generic", "unsafe", "dynamo-bug", "no-advice", "forbidden")
CULPRIT_OWNERS = {"user", "third-party", "torch", "unknown"}
# What the call site does with the value (context.toml [[call_shapes]]); "tensor" when none says otherwise.
CALL_SHAPES = {"control-flow", "lazy-setup", "non-tensor", "per-call-data", "module-call", "tensor"}
EXAMPLE_KEYS = {"expect", "era", "origin", "fields", "text"}
# Control characters (tab and newline aside), C1 controls and bidi overrides: a catalog is shown on a
# terminal, so none of these may hide in it.
_CONTROL = recache.compile(r"[\x00-\x08\x0b-\x1f\x7f-\x9f\u200e\u200f\u202a-\u202e\u2066-\u2069]")


def _regex() -> Any:
    """The `regex` module (per-search timeouts), imported when a pattern is first compiled: a log
    without a crash never needs it, and importing it costs 10-15 ms of start-up."""
    import regex  # type: ignore[import-untyped]

    return regex


class CatalogError(UserError):
    """A signature file is malformed; the message names the file, the field and the reason."""


class CatalogPattern:
    """A catalog pattern and where it is defined; it only ever runs under PATTERN_TIMEOUT.

    The `regex` module compiles slowly (about 0.7 ms a pattern, 300 patterns): a pattern is checked
    when the catalog loads (with the standard library's fast compiler where it understands the
    pattern) and compiled for real the first time it is used, so a scan pays only for what it runs;
    its compiled form is kept between runs (rxcache.py)."""

    __slots__ = ("_needs", "_rx", "groupindex", "negative", "source", "where")

    def __init__(self, source: str, where: str, negative: bool = False, groupindex: Any = None,
                 rx: Any = None) -> None:
        self.source = source
        self.where = where  # "file: field", for the timeout warning
        self.negative = negative  # a not_message pattern: a timeout must exclude, not admit
        self.groupindex = groupindex if groupindex is not None else {}
        self._rx = rx
        self._needs: tuple[str, ...] | None = None  # one of these is in every match; () for unknown

    def ruled_out(self, text: str) -> bool:
        """True when the pattern cannot match `text` (literals.py). Most patterns never match most
        records, and this spares compiling them at all."""
        needs = self._needs
        if needs is None:
            needs = self._needs = required_literals_of(self.source)
        if len(needs) == 1:
            return needs[0] not in text
        return bool(needs) and not any(s in text for s in needs)

    @property
    def rx(self) -> Any:
        if self._rx is None:
            from . import rxcache

            self._rx = rxcache.compile(self.source)  # regex.compile(source, MULTILINE | V0), kept between runs
        return self._rx

    @property
    def pattern(self) -> str:
        return self.source

    def search(self, text: str) -> Any:
        return search(self, text)


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
    fallback: tuple[tuple[str, str], ...] = ()  # wording for a variable the log does not give
    when: tuple[tuple[str, tuple[str, ...]], ...] = ()  # conditions (WHEN_KEYS) the crash must meet
    # It turns torch.compile off (a server's eager flag, -O0, dropping --enable-torch-compile, disabling the
    # whole model): never a fix, at most a diagnostic step after the fixes (diagnose.order_fixes).
    compile_off: bool = False


@dataclass(frozen=True, slots=True)
class Example:
    expect_match: bool
    text: str
    era: str
    origin: str
    fields: tuple[tuple[str, str], ...]


@dataclass(frozen=True, slots=True)
class Matcher:
    """Patterns per record field; all fields present must match (any pattern of a field), and where there
    are alternatives (`[[match.any]]` tables), at least one of them as well."""

    rules: tuple[tuple[str, tuple[Any, ...]], ...]
    dynamo: bool | None
    fatal: bool | None
    any: tuple[Matcher, ...] = ()

    def all_rules(self) -> list[tuple[str, tuple[Any, ...]]]:
        return list(self.rules) + [r for alt in self.any for r in alt.all_rules()]


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
    # message patterns that only torch.compile's stack prints (fake tensors running a custom op, a fake impl's
    # own call): a record whose message matches one shows dynamo at work without a dynamo frame or type
    compile_evidence: tuple[Any, ...] = ()


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
    suppress: tuple[str, ...] = ()  # kinds of generic fixes that do not work where this rule applies
    # `suppress` holds only where the culprit runs inside the frames the rule matched (one of them is an outer
    # frame of the culprit's): a culprit whose own line calls into them can still move that call out
    suppress_inside: bool = False


@dataclass(frozen=True, slots=True)
class ServerFlag:
    server: str
    mode: str
    min_version: tuple[int, ...] | None
    max_version: tuple[int, ...] | None  # inclusive
    text: str


@dataclass(frozen=True, slots=True)
class Banner:
    """A line a server prints once per launch (signatures/servers/*.toml `[[banner]]`): where a log
    appended to over several launches begins its next round."""

    server: str
    trigger: str  # a substring every such line holds: the cheap test (and a prefilter marker)
    pattern: Any


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
    mark: str = ""  # also keep every line where it matches, under this name (e.g. "suppressed")


@dataclass(slots=True)
class Catalog:
    signatures: list[Signature] = field(default_factory=list)
    libraries: list[LibraryRule] = field(default_factory=list)
    server_flags: list[ServerFlag] = field(default_factory=list)
    banners: list[Banner] = field(default_factory=list)
    context_rules: list[ContextRule] = field(default_factory=list)
    facts: list[FactRule] = field(default_factory=list)
    callee_patterns: list[Any] = field(default_factory=list)
    # dynamo's headers that name a file and line (WON'T CONVERT, FAILED INLINING, the recompile limit's
    # `function: 'f' (file:N)`): where the culprit is when a record's frames were cut
    location_patterns: list[Any] = field(default_factory=list)
    # context.toml [[call_shapes]]: (shape, pattern) over the source line that calls the culprit's code
    call_shapes: list[tuple[str, Any]] = field(default_factory=list)
    # [[call_shapes]] with `on = "entry"`: (shape, pattern) over the name of the function the call enters
    entry_shapes: list[tuple[str, Any]] = field(default_factory=list)
    # _torch_api.toml: (name, lowest torch release or None for the "unknown version" note, text), newest first
    api_forms: list[tuple[str, tuple[int, ...] | None, str]] = field(default_factory=list)
    version_hints: list[tuple[str, Any, str, str]] = field(default_factory=list)
    # context.toml [[hints]]: (kind, pattern) over each `Hint:` line of a 2.7+ dynamo message, first match wins
    hint_kinds: list[tuple[str, Any]] = field(default_factory=list)
    # _fixsets.toml `sets.third-party-culprit`: offered by every dynamo signature whose culprit is in
    # someone else's package, when the signature has no custom op of its own
    third_party_fixes: tuple[FixTemplate, ...] = ()
    by_id: dict[str, Signature] = field(default_factory=dict)
    warnings: list[str] = field(default_factory=list)

    def get(self, sig_id: str) -> Signature | None:
        return self.by_id.get(sig_id)

    def patterns(self) -> list[CatalogPattern]:
        """Every pattern of the catalog (signatures, library rules, context, facts, callee rules)."""
        pats: list[CatalogPattern] = []
        for sig in self.signatures:
            pats += [p for _key, ps in sig.matcher.all_rules() for p in ps] + list(sig.extract)
            pats += list(sig.compile_evidence)
        for rule in self.libraries:
            pats += [p for _key, ps in rule.matcher.all_rules() for p in ps]
        for crule in self.context_rules:
            pats += list(crule.patterns)
        pats += [f.pattern for f in self.facts] + list(self.callee_patterns) + [v[1] for v in self.version_hints]
        pats += [b.pattern for b in self.banners]
        pats += list(self.location_patterns) + [p for _s, p in self.call_shapes] + [p for _s, p in self.entry_shapes]
        pats += [p for _k, p in self.hint_kinds]
        return pats

    def warm(self) -> None:
        """Compile every pattern now: a long-running watcher pays this while idle, not when a crash arrives."""
        for pat in self.patterns():
            _ = pat.rx


def builtin_dir() -> Path:
    """The shipped catalog: next to the package when installed, or the repository's signatures/."""
    here = Path(__file__).resolve().parent
    packaged = here / "signatures"
    if packaged.is_dir():
        return packaged
    repo = here.parent.parent / "signatures"
    return repo


# The shipped catalog is checked by its own test suite (`crashlens signatures check` compiles every
# pattern), so at run time its patterns are only compiled when first used; user catalogs are checked
# in full when they load.
_TRUSTED = False
_NAMED_GROUP = recache.compile(r"\(\?P<(\w+)>")


def compile_pattern(pat: str, where: str, negative: bool = False) -> CatalogPattern:
    if _TRUSTED and isinstance(pat, str):
        names = {name: i for i, name in enumerate(_NAMED_GROUP.findall(pat), 1)}
        return CatalogPattern(pat, where, negative, names)
    if not isinstance(pat, str):
        raise CatalogError(f"{where}: pattern must be a string, got {type(pat).__name__}")
    if len(pat) > MAX_PATTERN_CHARS:
        raise CatalogError(f"{where}: pattern is {len(pat)} characters long (at most {MAX_PATTERN_CHARS})")
    if _nested_unbounded(pat):
        raise CatalogError(f"{where}: pattern {pat!r} nests unbounded repetition (catastrophic backtracking risk)")
    try:
        checked = re.compile(pat, re.MULTILINE)  # fast syntax check (`regex` accepts all of this too); not
        # recache: a user catalog's patterns do not belong in crashlens's cache
        return CatalogPattern(pat, where, negative, dict(checked.groupindex))
    except (re.error, ValueError, OverflowError, RecursionError):
        pass  # `regex`-only syntax (\p{..}, possessive quantifiers, ...): let `regex` judge it now
    mod = _regex()
    try:
        rx = mod.compile(pat, mod.MULTILINE | mod.V0)
    except (mod.error, ValueError, OverflowError, RecursionError) as e:
        raise CatalogError(f"{where}: pattern {pat!r} does not compile: {e}") from None
    return CatalogPattern(pat, where, negative, dict(rx.groupindex), rx)


def _quantifier(pat: str, i: int) -> tuple[int, bool]:
    """The quantifier at pat[i:], if any: (its length, whether it repeats unboundedly or very widely)."""
    n = len(pat)
    if i >= n:
        return 0, False
    c = pat[i]
    if c in "*+":
        length, unbounded = 1, True
    elif c == "?":
        length, unbounded = 1, False
    elif c == "{":
        m = re.match(r"\{\s*(\d*)\s*(,?)\s*(\d*)\s*\}", pat[i:])
        if m is None or (not m.group(1) and not m.group(3)):
            return 0, False  # a literal brace
        low = int(m.group(1) or 0)
        high = int(m.group(3)) if m.group(3) else None
        if not m.group(2):
            high = low
        length = m.end()
        unbounded = high is None or (high >= WIDE_REPEAT and high != low)
    else:
        return 0, False
    if i + length < n and pat[i + length] in "?+":  # lazy or possessive
        length += 1
    return length, unbounded


def _class_end(pat: str, i: int) -> int:
    """Index just past the character class opening at pat[i] (handles []...], [^]...], [[:alpha:]], escapes)."""
    n = len(pat)
    j = i + 1
    if j < n and pat[j] == "^":
        j += 1
    if j < n and pat[j] == "]":
        j += 1
    while j < n and pat[j] != "]":
        if pat[j] == "\\":
            j += 2
        elif pat.startswith("[:", j):
            close = pat.find(":]", j + 2)
            j = close + 2 if close >= 0 else j + 1
        elif pat[j] == "[":  # a nested set (regex V1 syntax): skip it whole
            j = _class_end(pat, j)
        else:
            j += 1
    return j + 1


def _nested_unbounded(pat: str) -> bool:
    """True for shapes like (a+)+, (a*)*, (.*x)*, (\\w{2,})+, ((a+)?)*: a repeated group holding an unbounded
    repeat, the shape whose backtracking grows exponentially with the line. Conservative: (?:x+y)+ counts too."""
    # One entry per open group: does it hold an unbounded repeat?
    stack: list[bool] = [False]
    i = 0
    n = len(pat)
    while i < n:
        c = pat[i]
        atom_unbounded = False  # the atom just read holds an unbounded repeat itself
        if c == "\\":
            i += 2
            if i - 1 < n and pat[i - 1] in "pPNxuUgk" and i < n and pat[i] == "{":
                close = pat.find("}", i)
                i = close + 1 if close >= 0 else n
        elif c == "[":
            i = _class_end(pat, i)
        elif c == "(":
            if pat.startswith("(?#", i):  # a comment
                close = pat.find(")", i)
                i = close + 1 if close >= 0 else n
                continue
            stack.append(False)
            i += 1
            continue
        elif c == ")":
            atom_unbounded = stack.pop() if len(stack) > 1 else False
            i += 1
        elif c in "|^$":
            i += 1
            continue
        else:
            i += 1
        qlen, unbounded = _quantifier(pat, i)
        if qlen:
            if atom_unbounded and unbounded:
                return True
            i += qlen
        if atom_unbounded or unbounded:
            stack[-1] = True
    return False


def search(pattern: Any, text: str) -> Any:
    """Pattern search under the catalog time limit. A timeout skips the pattern's signature for this text:
    no match for a positive pattern, an excluding hit for a negative one; reported once per pattern."""
    if isinstance(pattern, CatalogPattern):
        if pattern.ruled_out(text):
            return None
        rx = pattern.rx
    else:
        rx = pattern
    try:
        return rx.search(text, timeout=PATTERN_TIMEOUT)
    except TimeoutError:
        where = pattern.where if isinstance(pattern, CatalogPattern) else "catalog"
        _report_timeout(where, str(rx.pattern))
        if isinstance(pattern, CatalogPattern) and pattern.negative:
            return _EXCLUDED
        return None


class _Excluded:
    """What a timed-out negative pattern returns: truthy, so the signature is excluded for this text."""

    __slots__ = ()

    def __bool__(self) -> bool:
        return True

    def groupdict(self) -> dict[str, str]:
        return {}


_EXCLUDED = _Excluded()
_timed_out: set[tuple[str, str]] = set()


def _report_timeout(where: str, pat: str) -> None:
    if (where, pat) not in _timed_out:
        _timed_out.add((where, pat))
        print(f"crashlens: warning: {where}: pattern {pat[:80]!r} took over {PATTERN_TIMEOUT}s on a log line;"
              " that signature is skipped for such lines", file=sys.stderr)


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


def _matcher(d: dict[str, Any], where: str, nested: bool = False) -> Matcher:
    if not isinstance(d, dict):
        raise CatalogError(f"{where}: must be a table")
    rules = []
    dynamo = d.get("dynamo")
    fatal = d.get("fatal")
    alts: list[Matcher] = []
    for key, val in d.items():
        if key in ("dynamo", "fatal"):
            if not isinstance(val, bool):
                raise CatalogError(f"{where}.{key}: must be true or false")
            continue
        if key == "any" and not nested:
            if not isinstance(val, list) or not val or not all(isinstance(x, dict) for x in val):
                raise CatalogError(f"{where}.any: must be an array of tables ([[match.any]])")
            for i, alt in enumerate(val):
                sub = _matcher(alt, f"{where}.any[{i}]", nested=True)
                if not sub.rules or sub.dynamo is not None or sub.fatal is not None:
                    raise CatalogError(f"{where}.any[{i}]: needs pattern fields (dynamo/fatal belong to the match)")
                alts.append(sub)
            continue
        if key not in MATCH_KEYS:
            raise CatalogError(f"{where}.{key}: unknown match field (known: {', '.join(sorted(MATCH_KEYS))})")
        pats = tuple(
            compile_pattern(p, f"{where}.{key}", negative=key == "not_message") for p in _str_list(val, f"{where}.{key}")
        )
        rules.append((key, pats))
    return Matcher(tuple(rules), dynamo, fatal, tuple(alts))


def _unknown_keys(d: dict[str, Any], known: set[str], where: str) -> None:
    extra = sorted(set(d) - known)
    if extra:
        raise CatalogError(f"{where}: unknown field '{extra[0]}' (known: {', '.join(sorted(known))})")


def _int(d: dict[str, Any], key: str, default: int, where: str, low: int = -10_000, high: int = 10_000) -> int:
    v = d.get(key, default)
    if isinstance(v, bool) or not isinstance(v, int) or not low <= v <= high:
        raise CatalogError(f"{where}: field '{key}' must be an integer from {low} to {high}, got {v!r}")
    return v


def _bool(d: dict[str, Any], key: str, where: str, default: bool = False) -> bool:
    v = d.get(key, default)
    if not isinstance(v, bool):
        raise CatalogError(f"{where}: field '{key}' must be true or false, got {v!r}")
    return v


def _opt_str(d: dict[str, Any], key: str, where: str) -> str | None:
    v = d.get(key)
    if v is not None and not isinstance(v, str):
        raise CatalogError(f"{where}: field '{key}' must be a string, got {type(v).__name__}")
    return v


def _tables(d: dict[str, Any], key: str, where: str) -> list[tuple[str, dict[str, Any]]]:
    """An optional array of tables ([[key]]), each with the field path for messages."""
    items = d.get(key, [])
    if not isinstance(items, list) or not all(isinstance(x, dict) for x in items):
        raise CatalogError(f"{where}: field '{key}' must be an array of tables ([[{key}]])")
    return [(f"{where}: {key}[{i}]", x) for i, x in enumerate(items)]


def _check_strings(v: Any, where: str) -> None:
    """Reject escape sequences and other control characters anywhere in a catalog file's values."""
    if isinstance(v, str):
        m = _CONTROL.search(v)
        if m:
            raise CatalogError(f"{where}: contains control character {m.group()!r} (not allowed in a catalog)")
    elif isinstance(v, dict):
        for k, x in v.items():
            _check_strings(x, f"{where}.{k}" if not where.endswith(": ") else f"{where}{k}")
    elif isinstance(v, list):
        for i, x in enumerate(v):
            _check_strings(x, f"{where}[{i}]")


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
        _unknown_keys(f, FIX_KEYS, w)
        kind = _req(f, "kind", str, w)
        if kind not in FIX_KINDS:
            raise CatalogError(f"{w}.kind: {kind!r} is not one of {', '.join(sorted(FIX_KINDS))}")
        contexts = frozenset(_str_list(f.get("contexts", sorted(CONTEXTS)), f"{w}.contexts"))
        bad = contexts - CONTEXTS
        if bad:
            raise CatalogError(f"{w}.contexts: unknown context {min(bad)!r} (known: {', '.join(sorted(CONTEXTS))})")
        line = f.get("line")
        if line is not None and (isinstance(line, bool) or not isinstance(line, (int, str))):
            raise CatalogError(f"{w}.line: must be a line number or a template string")
        _req(f, "rank", int, w)
        compile_off = f.get("compile_off", False)
        if not isinstance(compile_off, bool):
            raise CatalogError(f"{w}.compile_off: must be true or false")
        out.append(
            FixTemplate(
                rank=_int(f, "rank", 0, w, 0, 10_000),
                kind=kind,
                title=_req(f, "title", str, w),
                detail=_opt_str(f, "detail", w) or "",
                contexts=contexts,
                servers=frozenset(_str_list(f.get("servers", []), f"{w}.servers")),
                modes=frozenset(_str_list(f.get("modes", []), f"{w}.modes")),
                safety=_opt_str(f, "safety", w) or "",
                file=_opt_str(f, "file", w),
                line=None if line is None else str(line),
                requires=tuple(_str_list(f.get("requires", []), f"{w}.requires")),
                fallback=_str_table(f.get("fallback", {}), f"{w}.fallback"),
                when=_when(f.get("when", {}), f"{w}.when"),
                compile_off=compile_off,
            )
        )
    return tuple(out)


def _str_table(v: Any, where: str) -> tuple[tuple[str, str], ...]:
    if not isinstance(v, dict) or not all(isinstance(x, str) for x in v.values()):
        raise CatalogError(f"{where}: must be a table of strings")
    return tuple((str(k), x) for k, x in v.items())


def _when(v: Any, where: str) -> tuple[tuple[str, tuple[str, ...]], ...]:
    if not isinstance(v, dict):
        raise CatalogError(f"{where}: must be a table")
    out = []
    for k, x in v.items():
        if k not in WHEN_KEYS:
            raise CatalogError(f"{where}.{k}: unknown condition (known: {', '.join(sorted(WHEN_KEYS))})")
        if isinstance(x, bool):
            vals: tuple[str, ...] = ("true" if x else "false",)
        else:
            vals = tuple(_str_list(x, f"{where}.{k}"))
        if k == "dynamo_hint" and set(vals) - {*HINT_KINDS, "none"}:
            raise CatalogError(f"{where}.{k}: must be among {', '.join((*HINT_KINDS, 'none'))}")
        if k == "culprit_owner" and set(vals) - CULPRIT_OWNERS:
            raise CatalogError(f"{where}.{k}: must be among {', '.join(sorted(CULPRIT_OWNERS))}")
        if k == "torch":
            for spec in vals:
                if not re.fullmatch(r"(?:>=|<|==)\d+\.\d+", spec) and spec != "unknown":
                    raise CatalogError(f"{where}.torch: {spec!r} must look like '>=2.4', '<2.2', '==2.1' or 'unknown'")
        out.append((str(k), vals))
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
        _unknown_keys(e, EXAMPLE_KEYS, w)
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


# Parsed files shipped with crashlens (the catalog, the audit's rules), keyed by path, size and mtime,
# kept in the user's cache directory: parsing ~60 TOML files with their example logs is most of a
# small scan's start-up time.
_PARSED: dict[str, Any] = {}
_PARSED_DIRTY = False


def _cache_file() -> Path | None:
    where = recache.cache_dir()
    if where is None:
        return None
    from . import __version__

    # marshal, not JSON: it loads several times faster and needs no import; its format is tied to the
    # Python version, which the name holds. One file per installed copy (the crc of where it lives):
    # the entries are keyed by path, so installs sharing one file (a venv per project) each load every
    # other's catalog too; with five installs that was 8 MB and 50 ms of every run.
    from zlib import crc32

    here = crc32(os.path.dirname(os.path.abspath(__file__)).encode("utf-8", "surrogateescape"))
    return Path(where) / f"catalog-{__version__}-py{sys.version_info[0]}{sys.version_info[1]}-{here:08x}.marshal"


def _file_key(path: Path) -> str:
    """Path, size and modification time: an edited file misses the cache. (The absolute path, not the
    resolved one: resolving a path costs a stat per component, for 57 files on every run.)"""
    st = os.stat(path)
    return f"{os.path.abspath(path)}|{st.st_size}|{st.st_mtime_ns}"


def _load_parsed_cache() -> None:
    cf = _cache_file()
    if cf is None or _PARSED:
        return
    try:
        import marshal

        data = marshal.loads(cf.read_bytes())
        if isinstance(data, dict) and all(isinstance(k, str) and isinstance(v, dict) for k, v in data.items()):
            _PARSED.update(data)
    except (OSError, ValueError, EOFError, TypeError):
        pass  # missing or damaged: parsed again, and rewritten


def _changed() -> None:
    """Something was parsed afresh: write the cache back when the process exits."""
    global _PARSED_DIRTY
    if not _PARSED_DIRTY:
        import atexit

        _PARSED_DIRTY = True
        atexit.register(_save_parsed_cache)


def read_shipped_toml(path: Path) -> dict[str, Any]:
    """A TOML file shipped with crashlens (such as the audit's rules), parsed once and then cached."""
    _load_parsed_cache()
    return _cached_toml(path)


# Patterns' required literals (literals.py), kept in the same cache: working them out for the ~250
# patterns a crash's diagnosis tries costs more than loading the whole parsed catalog.
_MAX_LITERALS = 5000
_LITERALS = "\x00required-literals"


@functools.lru_cache(maxsize=1)
def _literals_key() -> str:
    """The cache entry's key: it names literals.py as it is, so a changed analysis starts afresh."""
    try:
        return f"{_LITERALS}|" + _file_key(Path(__file__).with_name("literals.py"))
    except OSError:
        return _LITERALS


def required_literals_of(source: str) -> tuple[str, ...]:
    """literals.required_literals(source), or () for none, cached across runs."""
    table = _PARSED.get(_literals_key())
    if not isinstance(table, dict):
        table = _PARSED[_literals_key()] = {}
    got = table.get(source)
    if isinstance(got, list) and all(isinstance(x, str) for x in got):
        return tuple(got)
    from .literals import required_literals

    found = required_literals(source) or ()
    if len(table) < _MAX_LITERALS:
        table[source] = list(found)
        _changed()
    return found


def covering_literals_of(source: str) -> tuple[str, ...]:
    """literals.covering_literals(source), or () for none, cached across runs (in the same table)."""
    table = _PARSED.get(_literals_key())
    if not isinstance(table, dict):
        table = _PARSED[_literals_key()] = {}
    key = "\x00cover " + source
    got = table.get(key)
    if isinstance(got, list) and all(isinstance(x, str) for x in got):
        return tuple(got)
    from .literals import covering_literals

    found = covering_literals(source) or ()
    if len(table) < _MAX_LITERALS:
        table[key] = list(found)
        _changed()
    return found


def _stale(key: str) -> bool:
    """An entry of a file edited, moved or removed since it was parsed (or of an older literals.py)."""
    if key.startswith(_LITERALS):
        return key != _literals_key()
    try:
        return _file_key(Path(key.rsplit("|", 2)[0])) != key
    except (OSError, ValueError):
        return True


def _save_parsed_cache() -> None:
    """Write the cache (at exit, when something was parsed afresh), without the entries of files that
    have changed since: a stat per entry, paid only then."""
    global _PARSED_DIRTY
    cf = _cache_file()
    if cf is None or not _PARSED_DIRTY:
        return
    _PARSED_DIRTY = False
    for key in [k for k in _PARSED if _stale(k)]:
        del _PARSED[key]
    recache.write_kept(cf, _PARSED)


def _load_toml(path: Path) -> dict[str, Any]:
    """One catalog file, read with bounds: a regular file, at most MAX_FILE_BYTES, UTF-8, valid TOML."""
    return _cached_toml(path) if _TRUSTED else _read_toml(path)


def _cached_toml(path: Path) -> dict[str, Any]:
    try:
        key = _file_key(path)
    except OSError:
        return _read_toml(path)  # which says what is wrong with the file
    hit = _PARSED.get(key)
    if isinstance(hit, dict):
        return hit
    d = _PARSED[key] = _read_toml(path)
    _changed()
    return d


def _read_toml(path: Path) -> dict[str, Any]:
    try:
        if not path.is_file():  # a FIFO or a device named *.toml must not hang or flood the load
            raise CatalogError(f"{path}: not a regular file")
        with open(path, "rb") as fh:
            data = fh.read(MAX_FILE_BYTES + 1)
    except OSError as e:
        raise CatalogError(f"{path}: cannot read: {e.strerror or e}") from None
    if len(data) > MAX_FILE_BYTES:
        raise CatalogError(f"{path}: larger than {MAX_FILE_BYTES // 1024} KiB (is this a signature file?)")
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError as e:
        raise CatalogError(f"{path}: not UTF-8 text (byte {e.start})") from None
    try:
        toml = _tomllib()
        d: dict[str, Any] = toml.loads(text)
    except toml.TOMLDecodeError as e:
        raise CatalogError(f"{path}: not valid TOML: {e}") from None
    except RecursionError:
        raise CatalogError(f"{path}: not valid TOML: nested too deeply") from None
    _check_strings(d, f"{path}: ")
    return d


def load_fixsets(path: Path) -> dict[str, tuple[FixTemplate, ...]]:
    """Named fix lists that several signatures share (`fixsets = ["opaque-op", ...]`)."""
    d = _load_toml(path)
    sets = d.get("sets", {})
    if not isinstance(sets, dict):
        raise CatalogError(f"{path}: field 'sets' must be a table of arrays")
    return {str(name): _fixes(items, f"{path}: sets.{name}") for name, items in sets.items()}


def load_api_forms(path: Path) -> list[tuple[str, tuple[int, ...] | None, str]]:
    """_torch_api.toml: the spelling of a torch API per release (custom ops, is_compiling)."""
    d = _load_toml(path)
    out: list[tuple[str, tuple[int, ...] | None, str]] = []
    for fw, f in _tables(d, "forms", str(path)):
        spec = _req(f, "torch", str, fw)
        m = re.fullmatch(r">=(\d+)\.(\d+)", spec)
        if spec != "unknown" and m is None:
            raise CatalogError(f"{fw}.torch: {spec!r} must be '>=X.Y' or 'unknown'")
        out.append((_req(f, "name", str, fw), (int(m.group(1)), int(m.group(2))) if m else None,
                    _req(f, "text", str, fw)))
    return out


def load_signature(path: Path, fixsets: dict[str, tuple[FixTemplate, ...]] | None = None) -> Signature:
    d = _load_toml(path)
    w = str(path)
    _unknown_keys(d, SIGNATURE_KEYS, w)
    fixes = _fixes(d.get("fixes"), f"{w}: fixes")
    for name in _str_list(d.get("fixsets", []), f"{w}: fixsets"):
        if fixsets is None or name not in fixsets:
            raise CatalogError(f"{w}: field 'fixsets': no fix set named {name!r} in _fixsets.toml")
        fixes = fixes + fixsets[name]
    sig_id = _req(d, "id", str, w)
    if not re.fullmatch(r"[a-z0-9][a-z0-9-]{0,63}", sig_id):
        raise CatalogError(f"{w}: field 'id' must be kebab-case, got {sig_id!r}")
    extract = tuple(
        compile_pattern(p, f"{w}: extract") for p in _str_list(d.get("extract", []), f"{w}: extract")
    )
    title = _req(d, "title", str, w)
    summary = _req(d, "summary", str, w)
    confidence = d.get("confidence", 0.9)
    if isinstance(confidence, bool) or not isinstance(confidence, (int, float)) or not 0 <= confidence <= 1:
        raise CatalogError(f"{w}: field 'confidence' must be a number from 0 to 1, got {confidence!r}")
    tags = tuple(_str_list(d.get("tags", []), f"{w}: tags"))
    matcher = _matcher(_req(d, "match", dict, w), f"{w}: match")
    if not matcher.rules and not matcher.any and "fallback" not in tags:
        raise CatalogError(
            f"{w}: field 'match': needs at least one pattern field (a catch-all must be tagged \"fallback\")"
        )
    return Signature(
        id=sig_id,
        name=_opt_str(d, "name", w) or sig_id,
        family=_opt_str(d, "family", w) or "dynamo",
        title=title,
        summary=summary,
        why=_opt_str(d, "why", w) or "",
        priority=_int(d, "priority", 50, w),
        confidence=float(confidence),
        matcher=matcher,
        extract=extract,
        fixes=fixes,
        examples=_examples(d.get("examples"), f"{w}: examples"),
        next=tuple(_str_list(d.get("next", []), f"{w}: next")),
        path=w,
        fuzzy_text=" ".join(_str_list(d.get("fuzzy", []), f"{w}: fuzzy")) or title,
        tags=tags,
        compile_evidence=tuple(compile_pattern(p, f"{w}: compile_evidence")
                               for p in _str_list(d.get("compile_evidence", []), f"{w}: compile_evidence")),
    )


def load_library(path: Path) -> list[LibraryRule]:
    d = _load_toml(path)
    w = str(path)
    library = _req(d, "library", str, w)
    rules = _tables(d, "rules", w)
    if not rules:
        raise CatalogError(f"{w}: field 'rules' must be a non-empty array of tables ([[rules]])")
    out = []
    for rw, r in rules:
        out.append(
            LibraryRule(
                id=_req(r, "id", str, rw),
                library=library,
                title=_opt_str(r, "title", rw) or "",
                matcher=_matcher(_req(r, "match", dict, rw), f"{rw}.match"),
                signatures=tuple(_str_list(r.get("signatures", []), f"{rw}.signatures")),
                fixes=_fixes(r.get("fixes"), f"{rw}.fixes"),
                next=tuple(_str_list(r.get("next", []), f"{rw}.next")),
                references=tuple(_str_list(r.get("references", []), f"{rw}.references")),
                priority=_int(r, "priority", 50, rw),
                path=w,
                suppress=_fix_kinds(r.get("suppress", []), f"{rw}.suppress"),
                suppress_inside=_bool(r, "suppress_inside", rw),
            )
        )
    return out


def _fix_kinds(v: Any, where: str) -> tuple[str, ...]:
    kinds = _str_list(v, where)
    bad = [k for k in kinds if k not in FIX_KINDS]
    if bad:
        raise CatalogError(f"{where}: {bad[0]!r} is not a fix kind (known: {', '.join(sorted(FIX_KINDS))})")
    return tuple(kinds)


def load_server(path: Path) -> list[ServerFlag]:
    d = _load_toml(path)
    w = str(path)
    server = _req(d, "server", str, w)
    out = []
    for fw, f in _tables(d, "compile_off", w):
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


def load_banners(path: Path) -> list[Banner]:
    d = _load_toml(path)
    w = str(path)
    server = _req(d, "server", str, w)
    return [Banner(server, _req(b, "trigger", str, bw), compile_pattern(_req(b, "pattern", str, bw), f"{bw}.pattern"))
            for bw, b in _tables(d, "banner", w)]


def load_context(path: Path, cat: Catalog) -> None:
    d = _load_toml(path)
    w = str(path)
    for rw, r in _tables(d, "rules", w):
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
                priority=_int(r, "priority", 50, rw),
            )
        )
    for fw, f in _tables(d, "facts", w):
        sets = f.get("set", {})
        if not isinstance(sets, dict):
            raise CatalogError(f"{fw}.set: must be a table")
        cat.facts.append(
            FactRule(
                trigger=_req(f, "trigger", str, fw),
                pattern=compile_pattern(_req(f, "pattern", str, fw), f"{fw}.pattern"),
                sets=tuple((str(k), str(v)) for k, v in sets.items()),
                mark=str(f.get("mark", "")),
            )
        )
    for cw, c in _tables(d, "callee", w):
        pat = compile_pattern(_req(c, "pattern", str, cw), f"{cw}.pattern")
        groups = set(pat.groupindex)
        if not ({"callee"} <= groups or {"module", "qualname"} <= groups or {"cls", "method"} <= groups):
            raise CatalogError(f"{cw}.pattern: needs a (?P<callee>...) group, or module+qualname, or cls+method")
        cat.callee_patterns.append(pat)
    for lw, loc in _tables(d, "locations", w):
        pat = compile_pattern(_req(loc, "pattern", str, lw), f"{lw}.pattern")
        if not {"file", "line"} <= set(pat.groupindex):
            raise CatalogError(f"{lw}.pattern: needs (?P<file>...) and (?P<line>...) groups")
        cat.location_patterns.append(pat)
    for sw, sh in _tables(d, "call_shapes", w):
        shape = _req(sh, "shape", str, sw)
        if shape not in CALL_SHAPES:
            raise CatalogError(f"{sw}.shape: must be one of {', '.join(sorted(CALL_SHAPES))}")
        on = sh.get("on", "source")
        if on not in ("source", "entry"):
            raise CatalogError(f"{sw}.on: must be \"source\" (the calling line) or \"entry\" (the called function's name)")
        (cat.entry_shapes if on == "entry" else cat.call_shapes).append(
            (shape, compile_pattern(_req(sh, "pattern", str, sw), f"{sw}.pattern")))
    for hw, h in _tables(d, "hints", w):
        kind = _req(h, "kind", str, hw)
        if kind not in HINT_KINDS:
            raise CatalogError(f"{hw}.kind: must be one of {', '.join(HINT_KINDS)}")
        cat.hint_kinds.append((kind, compile_pattern(_req(h, "pattern", str, hw), f"{hw}.pattern")))
    for vw, v in _tables(d, "versions", w):
        cat.version_hints.append(
            (
                _req(v, "library", str, vw),
                compile_pattern(_req(v, "pattern", str, vw), f"{vw}.pattern"),
                str(v.get("version", "")),
                str(v.get("evidence", "")),
            )
        )


def _user_dirs(extra_dirs: list[str] | None) -> list[Path]:
    """$CRASHLENS_SIGNATURES (os.pathsep-separated) first, then each --signatures DIR, in order."""
    named = [(p, "CRASHLENS_SIGNATURES") for p in os.environ.get("CRASHLENS_SIGNATURES", "").split(os.pathsep) if p]
    named += [(p, "--signatures") for p in extra_dirs or []]
    dirs = []
    for e, origin in named:
        p = Path(e)
        if not p.exists():
            raise CatalogError(f"{e}: signature directory not found (from {origin})")
        if not p.is_dir():
            raise CatalogError(f"{e}: not a directory (from {origin}; give a directory of *.toml signature files)")
        if not any(p.glob("*.toml")) and not any(p.glob("*/*.toml")):
            raise CatalogError(f"{e}: no *.toml signature files in this directory (from {origin})")
        dirs.append(p)
    return dirs


def _guarded(path: Path, load: Any, *args: Any) -> Any:
    """Any defect of a catalog file becomes a CatalogError naming the file, never a traceback."""
    try:
        return load(path, *args)
    except CatalogError:
        raise
    except (TypeError, ValueError, AttributeError, KeyError, IndexError, OverflowError, RecursionError) as e:
        raise CatalogError(f"{path}: malformed ({type(e).__name__}: {e})") from None


def load_catalog(extra_dirs: list[str] | None = None, builtin: bool = True) -> Catalog:
    """Built-in catalog first, then each user dir; a later signature with the same id overrides.

    A defective file anywhere (malformed, duplicated id, hostile pattern) raises CatalogError naming its file,
    field and reason; the CLI prints that one line and exits 2 before reading any log.
    """
    cat = Catalog()
    dirs: list[Path] = [builtin_dir()] if builtin else []
    dirs += _user_dirs(extra_dirs)
    sigs: dict[str, Signature] = {}
    fixsets: dict[str, tuple[FixTemplate, ...]] = {}
    global _TRUSTED
    for n, base in enumerate(dirs):
        _TRUSTED = builtin and n == 0
        if _TRUSTED:
            _load_parsed_cache()
        try:
            _load_dir(base, n, builtin, cat, sigs, fixsets)
        finally:
            _TRUSTED = False
    cat.signatures = sorted(sigs.values(), key=lambda s: (-s.priority, s.id))
    cat.third_party_fixes = fixsets.get("third-party-culprit", ())
    cat.by_id = sigs
    cat.libraries.sort(key=lambda r: -r.priority)
    return cat


def _load_dir(base: Path, n: int, builtin: bool, cat: Catalog, sigs: dict[str, Signature],
              fixsets: dict[str, tuple[FixTemplate, ...]]) -> None:
    """One catalog directory: signatures, fix sets, library rules, server flags, context rules."""
    seen_here: dict[str, str] = {}
    fs_path = base / "_fixsets.toml"
    if fs_path.exists():
        fixsets.update(_guarded(fs_path, load_fixsets))
    for path in sorted(base.glob("*.toml")):
        if path.name.startswith("_") or path.name == "context.toml":
            continue
        sig = _guarded(path, load_signature, fixsets)
        if sig.id in seen_here:
            raise CatalogError(f"{path}: field 'id': {sig.id!r} is also used by {seen_here[sig.id]}")
        seen_here[sig.id] = str(path)
        sigs[sig.id] = sig  # later directories override built-ins by id
    api_path = base / "_torch_api.toml"
    if api_path.exists():
        cat.api_forms.extend(_guarded(api_path, load_api_forms))
    lib_here: dict[str, str] = {}
    for path in sorted((base / "libraries").glob("*.toml")):
        new = _guarded(path, load_library)
        for r in new:
            if r.id in lib_here:
                raise CatalogError(f"{path}: field 'rules.id': {r.id!r} is also used by {lib_here[r.id]}")
            lib_here[r.id] = str(path)
        ids = {r.id for r in new}
        cat.libraries = [r for r in cat.libraries if r.id not in ids] + new
    for path in sorted((base / "servers").glob("*.toml")):
        cat.server_flags.extend(_guarded(path, load_server))
        cat.banners.extend(_guarded(path, load_banners))
    ctx = base / "context.toml"
    if ctx.exists():
        _guarded(ctx, load_context, cat)
    if n == 0 and not seen_here and builtin:
        raise CatalogError(f"{base}: no signatures found (is crashlens installed correctly?)")


_CACHE: dict[tuple[str, ...], Catalog] = {}


def get_catalog(extra_dirs: list[str] | None = None) -> Catalog:
    key = tuple(extra_dirs or []) + (os.environ.get("CRASHLENS_SIGNATURES", ""),)
    cat = _CACHE.get(key)
    if cat is None:
        cat = _CACHE[key] = load_catalog(extra_dirs)
    return cat
