"""Catalog self-tests: every signature's examples match as marked, and a lint of the catalog itself."""

from __future__ import annotations

import re

from typing import Any

from ._struct import dataclass
from .catalog import Catalog, CatalogError, Signature, compile_pattern
from .frame import frame_lines
from .match import match_record
from .traceback import extract_records


@dataclass(frozen=True, slots=True)
class CheckResult:
    signature: str
    example: int
    ok: bool
    reason: str
    origin: str


def matches_in(text: str, cat: Catalog) -> list[tuple[str | None, dict[str, str]]]:
    out = []
    for rec in extract_records(frame_lines("<example>", text.strip("\n").splitlines())):
        m, _t = match_record(rec, cat)
        out.append((m.signature.id if m else None, dict(m.fields) if m else {}))
    return out


def check_signature(sig: Signature, cat: Catalog) -> list[CheckResult]:
    results = []
    for i, ex in enumerate(sig.examples):
        found = matches_in(ex.text, cat)
        ids = [sid for sid, _ in found]
        if ex.expect_match:
            hit = next((f for sid, f in found if sid == sig.id), None)
            if hit is None:
                results.append(CheckResult(sig.id, i, False, f"expected a match, got {ids or 'no crash record'}", ex.origin))
                continue
            wrong = [f"{k}={hit.get(k)!r} (want {v!r})" for k, v in ex.fields if hit.get(k) != v]
            results.append(CheckResult(sig.id, i, not wrong, "; ".join(wrong) or "matched", ex.origin))
        else:
            bad = sig.id in ids
            results.append(CheckResult(sig.id, i, not bad, "matched but should not" if bad else "no match, as expected", ex.origin))
    return results


def check_catalog(cat: Catalog) -> list[CheckResult]:
    out: list[CheckResult] = []
    for sig in cat.signatures:
        out.extend(check_signature(sig, cat))
    return out


# A server flag in the catalog's "turn compilation off" texts (servers/*.toml [[compile_off]]): --enforce-eager,
# -O0, --disable-piecewise-cuda-graph, ... What follows "(or " there is a milder alternative (lower
# --torch-compile-max-bs), and --compilation-config only holds options: neither turns compilation off.
_FLAG = re.compile(r"(?<![\w-])(?:--[a-z][\w-]*(?:=\w+)?|-O0)")
DIAGNOSTIC_LABEL = "diagnostic step, not a fix"


def compile_off_flags(cat: Catalog) -> frozenset[str]:
    out: set[str] = set()
    for f in cat.server_flags:
        out |= {t for t in _FLAG.findall(f.text.split("(or ", 1)[0]) if not t.endswith("-config")}
    return frozenset(out)


def _all_fix_templates(cat: Catalog) -> list[tuple[str, Any]]:
    out = [(sig.path, f) for sig in cat.signatures for f in sig.fixes]
    out += [(f"library rule {r.id}", f) for r in cat.libraries for f in r.fixes]
    out += [("_fixsets.toml sets.third-party-culprit", f) for f in cat.third_party_fixes]
    return out


def compile_off_problems(cat: Catalog) -> list[str]:
    """A fix that turns compilation off (the server's off flag, a flag of servers/*.toml's compile_off texts)
    must say so (`compile_off = true`), which ranks it after every fix as a diagnostic step; a fix that
    only mentions the flag as the way to see the real error says "diagnostic step, not a fix"."""
    flags = compile_off_flags(cat)
    problems = []
    for where, f in _all_fix_templates(cat):
        names = "{server.off_flag}" in f.title or any(t in f.title for t in flags)
        if names and not f.compile_off and DIAGNOSTIC_LABEL not in f.title.lower():
            problems.append(f"{where}: fix {f.title[:80]!r} turns compilation off: mark it compile_off = true "
                            f"(a diagnostic step, never a fix)")
    return problems


def lint(cat: Catalog) -> list[str]:
    """Problems that make a catalog unfit to ship. The shipped catalog's patterns are compiled on
    first use at run time, so this is where every one of them is compiled and checked."""
    problems = []
    for pat in cat.patterns():
        where = getattr(pat, "where", "catalog")
        source = getattr(pat, "source", getattr(pat, "pattern", ""))
        try:
            compile_pattern(source, where)  # the full check user catalogs get at load
            _ = pat.rx
        except CatalogError as e:
            problems.append(str(e))
        except Exception as e:  # noqa: BLE001 - any compile failure is a catalog defect
            problems.append(f"{where}: pattern {source!r} does not compile: {e}")
    for sig in cat.signatures:
        pos = sum(1 for e in sig.examples if e.expect_match)
        neg = sum(1 for e in sig.examples if not e.expect_match)
        if pos < 1:
            problems.append(f"{sig.path}: field 'examples': needs at least one positive example (expect = \"match\")")
        if neg < 1:
            problems.append(f"{sig.path}: field 'examples': needs at least one negative example (expect = \"no-match\")")
        if not sig.fixes and sig.family == "dynamo":
            problems.append(f"{sig.path}: field 'fixes': a dynamo signature needs at least one fix")
        if "program-raises" in sig.tags:
            # `crashlens fix` leaves such a program untouched (the exception is its own, eager raises it too)
            if sig.family != "dynamo":
                problems.append(f"{sig.path}: field 'tags': \"program-raises\" is for a dynamo signature (what "
                                "`crashlens fix` plans for)")
            if any(f.kind in ("custom-op", "precompute") for f in sig.fixes):
                problems.append(f"{sig.path}: field 'tags': \"program-raises\" with a fix that changes how the "
                                "code is compiled (custom-op, precompute): code that raises in eager too "
                                "needs its own bug fixed")
        ranks = [f.rank for f in sig.fixes]
        if len(ranks) != len({(f.rank, f.title) for f in sig.fixes}):
            problems.append(f"{sig.path}: field 'fixes': duplicate fix")
    return problems + compile_off_problems(cat) + patch_problems()


def patch_problems() -> list[str]:
    """signatures/patches/: each template names its kind, the torch release it is for, and its text; each
    process constant and clock (constants.toml) is a module's function as code spells it (`os.cpu_count`);
    shapes.toml's value-dependent functions are names."""
    import re

    from . import fixplan

    problems = []
    base = fixplan._patches_dir()
    for i, tpl in enumerate(fixplan.templates()):
        for key in ("kind", "torch", "text"):
            if not isinstance(tpl.get(key), str) or not tpl.get(key):
                problems.append(f"{base / 'templates.toml'}: template {i + 1}: field {key!r} is missing or empty")
        if isinstance(tpl.get("torch"), str) and not fixplan.version_tuple(tpl["torch"]):
            problems.append(f"{base / 'templates.toml'}: template {i + 1}: torch {tpl['torch']!r} is no release")
    dotted = re.compile(r"^[A-Za-z_]\w*(?:\.[A-Za-z_]\w*)+$")
    for section, entries in (("constant", fixplan.process_constants()), ("clock", fixplan.clocks())):
        for e in entries:
            call = e.get("call")
            if not isinstance(call, str) or not dotted.match(call):
                problems.append(f"{base / 'constants.toml'}: [[{section}]] call {call!r}: not a module's function "
                                "(module.function)")
            if not all(isinstance(d, str) and dotted.match(d) for d in e.get("dynamo", [])):
                problems.append(f"{base / 'constants.toml'}: [[{section}]] {call}: field 'dynamo': dotted names")
    for name in fixplan._value_dependent():
        if not isinstance(name, str) or not name.isidentifier():
            problems.append(f"{base / 'shapes.toml'}: value_dependent: {name!r} is not a function's name")
    for e in fixplan.process_state():
        name = e.get("name")
        for key in ("name", "read_by"):
            if not isinstance(e.get(key), str) or not e.get(key):
                problems.append(f"{base / 'state.toml'}: [[state]] {name!r}: field {key!r} is missing or empty")
        if not all(isinstance(c, str) and dotted.match(c) for c in e.get("calls", [])):
            problems.append(f"{base / 'state.toml'}: [[state]] {name!r}: field 'calls': module.function names")
        if not all(isinstance(m, str) and m.isidentifier() for m in e.get("methods", [])):
            problems.append(f"{base / 'state.toml'}: [[state]] {name!r}: field 'methods': method names")
        if not e.get("calls") and not e.get("methods"):
            problems.append(f"{base / 'state.toml'}: [[state]] {name!r}: no 'calls' and no 'methods'")
    return problems
