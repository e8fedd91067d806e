"""Loads the rejected-call catalog (signatures/audit/rejected_calls.toml) and matches dotted call names."""

from __future__ import annotations

from functools import lru_cache
from pathlib import Path

from .._struct import dataclass

TYPE_CHECKING = False  # typing.TYPE_CHECKING without importing typing (~4 ms of start-up)
if TYPE_CHECKING:
    from typing import Any

RULES_RELPATH = ("signatures", "audit", "rejected_calls.toml")


@dataclass(frozen=True, slots=True)
class CallRule:
    """One `[[call]]` entry: calls matching `pattern` are rejected by dynamo."""

    pattern: str
    category: str
    reason: str
    returns: str = ""


@dataclass(frozen=True, slots=True)
class Construct:
    """One `[[construct]]` entry: a non-call construct dynamo rejects (FFI call, module setattr, ...)."""

    kind: str
    category: str
    reason: str


@dataclass(frozen=True, slots=True)
class DecoratorRule:
    pattern: str
    effect: str  # transparent | disabled | opaque
    cache: bool = False


@dataclass(frozen=True, slots=True)
class FixRule:
    id: str
    context: str  # fullgraph | non-fullgraph | both
    removes: str  # all | this | none
    categories: tuple[str, ...]
    text: str
    label: str = ""
    scope: str = ""
    needs_cache: bool = False


@dataclass(frozen=True, slots=True, eq=False)
class Rules:
    """The whole catalog, with patterns split by kind so matching is a few dict lookups."""

    exact: dict[str, CallRule]
    prefixes: dict[str, CallRule]  # "subprocess" for "subprocess.*"
    methods: dict[str, CallRule]  # "exists" for "*.exists"
    allowed_exact: frozenset[str]
    allowed_prefixes: frozenset[str]
    constructs: dict[str, Construct]
    decorators: tuple[DecoratorRule, ...]
    returns: dict[str, str]
    aliases: dict[str, str]
    opaque_packages: frozenset[str]
    fixes: tuple[FixRule, ...]

    def canonical(self, dotted: str) -> str:
        """Rewrite a dotted name through [aliases], longest prefix first (`posixpath.x` → `os.path.x`)."""
        parts = dotted.split(".")
        for cut in range(len(parts), 0, -1):
            head = ".".join(parts[:cut])
            target = self.aliases.get(head)
            if target is not None:
                return ".".join([target, *parts[cut:]])
        return dotted

    def match(self, dotted: str) -> CallRule | None:
        """The rule rejecting `dotted`, or None. An [[allow]] wins over a pattern no more specific than it."""
        if dotted in self.allowed_exact:
            return None
        rule = self.exact.get(dotted)
        if rule is not None:
            return rule
        parts = dotted.split(".")
        for cut in range(len(parts) - 1, 0, -1):
            head = ".".join(parts[:cut])
            if head in self.allowed_prefixes:
                return None
            rule = self.prefixes.get(head)
            if rule is not None:
                return rule
        return None

    def match_unknown_method(self, name: str) -> CallRule | None:
        return self.methods.get(name)

    def decorator(self, dotted: str) -> DecoratorRule | None:
        for rule in self.decorators:
            if rule.pattern == dotted or (
                rule.pattern.endswith(".*") and dotted.startswith(rule.pattern[:-1])
            ):
                return rule
        return None

    def is_opaque_package(self, top: str) -> bool:
        return top in self.opaque_packages


def rules_path() -> Path:
    """Where rejected_calls.toml lives: the source checkout first, then the installed package data."""
    here = Path(__file__).resolve()
    # checkout: <repo>/src/crashlens/audit/rules.py; installed: <site>/crashlens/signatures/audit/...
    for root in (here.parents[3], here.parents[1]):
        candidate = root.joinpath(*RULES_RELPATH)
        if candidate.is_file():
            return candidate
    try:
        from importlib.resources import files

        packaged = files("crashlens").joinpath("signatures", "audit", "rejected_calls.toml")
        if packaged.is_file():
            return Path(str(packaged))
    except (ModuleNotFoundError, OSError, TypeError):
        pass
    raise FileNotFoundError("crashlens audit rules not found: signatures/audit/rejected_calls.toml")


def _str_list(value: Any) -> tuple[str, ...]:
    if isinstance(value, str):
        return (value,)
    return tuple(str(v) for v in value or ())


def parse_rules(data: dict[str, Any]) -> Rules:
    exact: dict[str, CallRule] = {}
    prefixes: dict[str, CallRule] = {}
    methods: dict[str, CallRule] = {}
    for entry in data.get("call", []):
        rule = CallRule(
            pattern=entry["pattern"],
            category=entry["category"],
            reason=entry.get("reason", ""),
            returns=entry.get("returns", ""),
        )
        if rule.pattern.startswith("*."):
            methods[rule.pattern[2:]] = rule
        elif rule.pattern.endswith(".*"):
            prefixes[rule.pattern[:-2]] = rule
        else:
            exact[rule.pattern] = rule
    allowed_exact = frozenset(a["pattern"] for a in data.get("allow", []) if not a["pattern"].endswith(".*"))
    allowed_prefixes = frozenset(a["pattern"][:-2] for a in data.get("allow", []) if a["pattern"].endswith(".*"))
    constructs = {
        c["kind"]: Construct(kind=c["kind"], category=c["category"], reason=c.get("reason", ""))
        for c in data.get("construct", [])
    }
    decorators = tuple(
        DecoratorRule(pattern=d["pattern"], effect=d["effect"], cache=bool(d.get("cache", False)))
        for d in data.get("decorator", [])
    )
    fixes = tuple(
        FixRule(
            id=f["id"],
            context=f["context"],
            removes=f["removes"],
            categories=_str_list(f.get("categories", ["*"])),
            text=f["text"],
            label=f.get("label", f["id"]),
            scope=f.get("scope", ""),
            needs_cache=bool(f.get("needs_cache", False)),
        )
        for f in data.get("fix", [])
    )
    named_packages = {
        pattern.split(".")[0]
        for pattern in [*exact, *prefixes]
        if "." in pattern
    }
    opaque = frozenset(_str_list(data.get("walk", {}).get("opaque", ()))) | named_packages
    return Rules(
        exact=exact,
        prefixes=prefixes,
        methods=methods,
        allowed_exact=allowed_exact,
        allowed_prefixes=allowed_prefixes,
        constructs=constructs,
        decorators=decorators,
        returns={str(k): str(v) for k, v in data.get("returns", {}).items()},
        aliases={str(k): str(v) for k, v in data.get("aliases", {}).items()},
        opaque_packages=opaque,
        fixes=fixes,
    )


@lru_cache(maxsize=4)
def load_rules(path: str | None = None) -> Rules:
    """Parse the rules once per process; the shipped file's parse is cached across runs with the
    catalog's (a crash whose library is installed is audited at once, and tomllib takes ~8 ms)."""
    from ..catalog import _tomllib, read_shipped_toml

    if path is None:
        return parse_rules(read_shipped_toml(rules_path()))
    with open(path, "rb") as fh:
        return parse_rules(_tomllib().load(fh))
