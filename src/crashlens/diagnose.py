"""Matches in, diagnoses out: culprit, context-aware ranked fixes, fingerprints, dedup across ranks."""

from __future__ import annotations

import re
from collections.abc import Callable, Iterable

from . import recache
from ._struct import replace
from .catalog import Catalog, FixTemplate, LibraryRule, Signature
from .context import Facts, compile_off_flag, infer_context
from .culprit import entry_of, module_of, package_of, source_root
from .match import Match, Targets, library_rules, match_record
from .records import Context, CrashRecord, Diagnosis, Fix, Frame, Occurrence

TYPE_CHECKING = False  # typing.TYPE_CHECKING without importing typing (~4 ms of start-up)
if TYPE_CHECKING:
    from typing import Any

_VAR = recache.compile(r"\{([a-z_][a-z0-9_.]*)\}")
_VOLATILE = recache.compile(r"0x[0-9a-fA-F]+|\b\d+\b|'[^']*'|\"[^\"]*\"|/[^\s:,'\"]+")

# Where a template needs a value the log does not have, it reads as prose instead.
_FALLBACK = {
    "culprit.where": "the library frame named in the traceback",
    "culprit.file": "the library file in the traceback",
    "culprit.function": "the traced function",
    "culprit.line": "?",
    "callee": "the call dynamo rejected",
    "entry.function": "the library function called from the compiled region",
    "entry.qualified": "the library function called from the compiled region",
    "server.off_flag": "the server option that turns off compilation",
    "culprit.source": "that line",
}


def short_path(path: str, root: str | None = None) -> str:
    """The part of a path that is the same on every machine: from the package directory on."""
    p = path.replace("\\", "/")
    if root and p.startswith(root) and "site-packages/" not in p and "dist-packages/" not in p:
        return p[len(root) :]
    for marker in ("site-packages/", "dist-packages/"):
        i = p.rfind(marker)
        if i >= 0:
            return p[i + len(marker) :]
    parts = p.split("/")
    pkg = package_of(p)
    if pkg and pkg in parts[:-1]:
        return "/".join(parts[len(parts) - 1 - parts[::-1].index(pkg) :])
    return "/".join(parts[-3:])


def fingerprint(sig_id: str, family: str, t: Targets, gb_type: str | None, headline: str) -> str:
    """Same crash, same id: in another run, on another rank, under another install prefix."""
    if t.culprit is not None:
        # the file's last two path parts: the same whether the library is installed or a checkout
        tail = "/".join(t.culprit.file.replace("\\", "/").split("/")[-2:])
        where = f"{tail}:{t.culprit.function}"
    else:
        where = _VOLATILE.sub("#", headline)[:200]
    # The graph-break type is left out on purpose: partial copies of one crash (SGLang's PCG message,
    # a duplicate graph break) may lack it, and they must get the same id.
    key = "|".join((family, sig_id, _VOLATILE.sub("#", t.callee), where))
    try:  # CPython's own SHA-1: the same digest as hashlib's, without loading OpenSSL (4 ms)
        from _sha1 import sha1  # type: ignore[import-not-found]
    except ImportError:  # pragma: no cover - a Python built without it
        from hashlib import sha1

    digest: str = sha1(key.encode("utf-8", "replace")).hexdigest()
    return digest[:16]


def _vars(t: Targets, fields: dict[str, str], ctx: Context, cat: Catalog) -> dict[str, str]:
    v: dict[str, str] = {k: str(x) for k, x in fields.items()}
    c = t.culprit
    if c is not None:
        v["culprit.file"] = c.file
        v["culprit.short"] = short_path(c.file)
        v["culprit.line"] = str(c.line)
        v["culprit.function"] = c.function
        v["culprit.where"] = f"{short_path(c.file)}:{c.line} in {c.function}"
        if c.source:
            v["culprit.source"] = c.source
        pkg = package_of(c.file, source_root(t.chain))
        if pkg:
            v["library"] = pkg
    entry, caller = entry_of(t.chain, c)
    if entry is not None and caller is not None:
        v["entry.function"] = entry.function
        v["entry.file"] = entry.file
        v["entry.short"] = short_path(entry.file)
        v["entry.line"] = str(entry.line)
        mod = module_of(entry.file, source_root(t.chain))
        v["entry.qualified"] = f"{mod}.{entry.function}" if mod else entry.function
        v["caller.file"] = caller.file
        v["caller.line"] = str(caller.line)
        v["caller.function"] = caller.function
        v["caller.where"] = f"{short_path(caller.file)}:{caller.line} in {caller.function}"
        if caller.source:
            v["caller.source"] = caller.source
    if t.callee:
        v["callee"] = t.callee
    if ctx.server:
        v["server.name"] = ctx.server
    flag = compile_off_flag(ctx, cat)
    if flag:
        v["server.off_flag"] = flag
    for name, ver in ctx.versions:
        v[f"version.{name}"] = ver
    return v


def render_template(text: str, values: dict[str, str]) -> str:
    def sub(m: re.Match[str]) -> str:
        key = m.group(1)
        return values.get(key, _FALLBACK.get(key, m.group(0)))

    return _VAR.sub(sub, text)


def reflow(text: str) -> str:
    """Join hard-wrapped prose lines; keep indented lines (code, list items) and lines after a colon."""
    out: list[str] = []
    for raw in text.strip().splitlines():
        line = raw.rstrip()
        if out and line and not line[0].isspace() and out[-1] and not out[-1].endswith(":") \
                and not out[-1].startswith((" ", "\t")):
            out[-1] = out[-1] + " " + line
        else:
            out.append(line)
    return "\n".join(out)


def _applies(f: FixTemplate, ctx: Context) -> bool:
    key = "unknown" if ctx.fullgraph is None else ("fullgraph" if ctx.fullgraph else "graph-break")
    if key not in f.contexts:
        return False
    if f.servers and (ctx.server or "none") not in f.servers:
        return False
    return not (f.modes and (ctx.mode or "none") not in f.modes)


def _render_fixes(
    templates: Iterable[tuple[FixTemplate, str]], values: dict[str, str], ctx: Context
) -> list[Fix]:
    fixes: list[Fix] = []
    seen_titles: set[str] = set()
    for tmpl, origin in sorted(templates, key=lambda x: x[0].rank):
        if not _applies(tmpl, ctx):
            continue
        if any(r not in values for r in tmpl.requires):
            continue
        title = render_template(tmpl.title, values)
        if title in seen_titles:
            continue
        seen_titles.add(title)
        line_s = render_template(tmpl.line, values) if tmpl.line else None
        fixes.append(
            Fix(
                rank=tmpl.rank,
                kind=tmpl.kind,
                title=title,
                detail=reflow(render_template(tmpl.detail, values)),
                file=render_template(tmpl.file, values) if tmpl.file and tmpl.file.strip("{}") in values or (
                    tmpl.file and "{" not in tmpl.file) else None,
                line=int(line_s) if line_s and line_s.isdigit() else None,
                safety=tmpl.safety,
                source=origin,
            )
        )
    return [replace(f, rank=i) for i, f in enumerate(fixes, 1)]


def diagnose(
    record: CrashRecord,
    cat: Catalog,
    facts: Facts,
    next_blockers: Callable[[Frame, tuple[Frame, ...]], list[dict[str, Any]]] | None = None,
) -> Diagnosis | None:
    m, t = match_record(record, cat)
    if m is None:
        return None
    return build(record, m, t, cat, facts, next_blockers)


def build(
    record: CrashRecord,
    m: Match,
    t: Targets,
    cat: Catalog,
    facts: Facts,
    next_blockers: Callable[[Frame, tuple[Frame, ...]], list[dict[str, Any]]] | None = None,
) -> Diagnosis:
    sig: Signature = m.signature
    ctx = infer_context(record, t, facts, cat)
    values = _vars(t, m.fields, ctx, cat)
    libs: list[LibraryRule] = library_rules(t, sig, cat)
    templates: list[tuple[FixTemplate, str]] = []
    lib_kinds: set[str] = set()
    offered: set[tuple[str, str]] = set()
    for rule in libs:  # most specific rule first
        mine: set[tuple[str, str]] = set()
        for f in rule.fixes:
            key = (rule.library, f.kind)
            if f.kind in ("custom-op", "upgrade") and key in offered:
                continue  # a more specific rule of the same library already offers this kind of fix
            templates.append((f, rule.id))
            if _applies(f, ctx):
                lib_kinds.add(f.kind)
                mine.add(key)
        offered |= mine
    suppressed = {k for rule in libs for k in rule.suppress}
    for f in sig.fixes:
        if f.kind in suppressed:
            continue  # the library rule knows this kind of fix does not work here
        # A library's own fix of the same kind (its custom op, its release) replaces the generic one.
        if f.kind in lib_kinds and f.kind in ("custom-op", "upgrade"):
            continue
        templates.append((f, sig.id))
    fixes = _render_fixes(templates, values, ctx)
    warnings = [render_template(n, values) for rule in libs for n in rule.next]
    warnings += [render_template(n, values) for n in sig.next]
    headline = record.headline
    exception = (headline.type, headline.message.split("\n", 1)[0]) if headline and (headline.type or headline.message) else None
    confidence = sig.confidence * (m.score / 100.0 if not m.exact else 1.0)
    if not record.complete:
        confidence *= 0.9
    if m.exact and libs:
        confidence = min(1.0, confidence + 0.03)
    gb_type = record.dynamo.gb_type if record.dynamo else None
    fp = fingerprint(sig.id, sig.family, t, gb_type, exception[1] if exception else "")
    nxt: list[dict[str, Any]] = []
    if next_blockers is not None and t.culprit is not None:
        try:
            nxt = next_blockers(t.culprit, t.chain)
        except Exception:  # noqa: BLE001 - optional enrichment must never break a diagnosis
            nxt = []
    return Diagnosis(
        id=fp,
        family=sig.family,
        signature=sig.id,
        title=render_template(sig.title, values),
        summary=render_template(sig.summary, values),
        confidence=round(confidence, 3),
        fatal=record.kind in ("traceback", "partial"),
        exception=exception,
        culprit=t.culprit,
        callee=t.callee or None,
        chain=t.chain,
        context=ctx,
        occurrences=(Occurrence(record.source, record.start_line, record.rank),),
        fixes=tuple(fixes),
        why=reflow(render_template(sig.why, values)),
        near_match=None if m.exact else round(m.score, 1),
        gb_id=(record.dynamo.gb_id if record.dynamo else None),
        next=tuple(nxt),
        warnings=tuple(dict.fromkeys(w for w in warnings if w)),
        fields=tuple(sorted(m.fields.items())),
        complete=record.complete and bool(exception and exception[0]),
        evidence=record.evidence,
    )


def _richness(d: Diagnosis) -> tuple[int, int, int, int, int]:
    """Which copy of a crash to show: the dynamo exception itself beats a wrapper that quotes it
    ("Worker failed with error '...'"), then more frames, a culprit, more fixes."""
    return (
        int(d.exception is not None and d.exception[0].startswith(("torch._dynamo.", "torch._inductor."))),
        int(d.exception is not None and bool(d.exception[0])),
        len(d.chain),
        int(d.culprit is not None),
        len(d.fixes),
    )


def _fold_location_only(diags: Iterable[Diagnosis]) -> list[Diagnosis]:
    """A duplicate graph break logs only its location ("user stack suppressed"): count it as another
    occurrence of the diagnosis whose traced chain ends at that location."""
    full: list[Diagnosis] = []
    only_loc: list[Diagnosis] = []
    for d in diags:
        (only_loc if len(d.chain) == 1 and d.chain[0].function == "<graph break>" else full).append(d)
    by_end = {(d.chain[-1].file, d.chain[-1].line): i for i, d in enumerate(full) if d.chain}
    for d in only_loc:
        i = by_end.get((d.chain[0].file, d.chain[0].line))
        if i is None:
            full.append(d)
        else:
            base = full[i]
            full[i] = replace(base, occurrences=tuple(dict.fromkeys(base.occurrences + d.occurrences)))
    return full


def _contains(chain: tuple[Frame, ...], part: tuple[Frame, ...]) -> bool:
    n = len(part)
    key = [(f.file, f.line, f.function) for f in part]
    full = [(f.file, f.line, f.function) for f in chain]
    return any(full[i : i + n] == key for i in range(len(full) - n + 1))


def _fragment_host(d: Diagnosis, whole: list[Diagnosis]) -> Diagnosis | None:
    """The complete report that `d` is a cut or frame-losing copy of, if any."""
    if not d.chain:
        return None
    # A fragment without its exception line may only have a callee read off the source line.
    untyped = not d.exception or not d.exception[0]
    for e in whole:
        if e is d or e.family != d.family or len(e.chain) <= len(d.chain) or not _contains(e.chain, d.chain):
            continue
        if (not d.complete and (d.callee is None or d.callee == e.callee or untyped)) or (
                d.callee is not None and d.callee == e.callee and d.exception == e.exception):
            return e
    return None


def _fold_fragments(diags: list[Diagnosis]) -> list[Diagnosis]:
    """A cut-off copy of a crash (a truncated paste, or a rank's piece lost among other ranks'
    output) whose frames are part of a complete report of the same crash is another occurrence
    of that crash, not a crash of its own."""
    whole = [d for d in diags if d.complete and d.chain]
    host_of: dict[str, str] = {}
    for d in diags:
        host = _fragment_host(d, whole)
        if host is not None:
            host_of[d.id] = host.id

    def root(i: str) -> str:  # hosts have strictly longer chains, so this ends
        while i in host_of:
            i = host_of[i]
        return i

    extra: dict[str, tuple[Occurrence, ...]] = {}
    for d in diags:
        if d.id in host_of:
            r = root(d.id)
            extra[r] = extra.get(r, ()) + d.occurrences
    return [replace(d, occurrences=tuple(dict.fromkeys(d.occurrences + extra[d.id]))) if d.id in extra else d
            for d in diags if d.id not in host_of]


def _absorb(host: Diagnosis, part: Diagnosis) -> Diagnosis:
    ctx = host.context if host.context.fullgraph is not None else (
        part.context if part.context.fullgraph is not None else host.context)
    extra = {}
    if part.signature == host.signature and len(part.fixes) > len(host.fixes):
        # the same signature, and this copy had the values more of its fixes need (the recompile
        # limit's warning names the failing guard; the error it announced does not)
        extra = {"fixes": part.fixes, "fields": part.fields}
    return replace(host, occurrences=tuple(dict.fromkeys(host.occurrences + part.occurrences)), context=ctx,
                   fatal=host.fatal or part.fatal, **extra)


def _typed_dynamo(d: Diagnosis) -> bool:
    return d.exception is not None and d.exception[0].startswith(("torch._dynamo.", "torch._inductor."))


def _quoted_host(d: Diagnosis, hosts: list[Diagnosis]) -> Diagnosis | None:
    """The dynamo crash whose message `d`'s exception quotes: a server's re-raise ("Piecewise CUDA Graph
    failed with error: ...", "Worker failed with error '...'") is that crash again, not another one.
    Its frames are the server's own, so they say nothing; of several such crashes, the nearest one
    printed before it."""
    if d.exception is None or _typed_dynamo(d) or not d.fatal or not d.occurrences:
        return None
    said = d.exception[1].strip()
    src, line = d.occurrences[0].source, d.occurrences[0].line
    best: tuple[tuple[int, int], Diagnosis] | None = None
    for e in hosts:
        msg = e.exception[1].strip() if e.exception else ""
        if e is d or not e.fatal or len(msg) < 12 or msg not in said or msg == said:
            continue
        gaps = [line - o.line for o in e.occurrences if o.source == src]
        key = min(((g < 0, abs(g)) for g in gaps), default=(True, 1 << 30))
        if best is None or key < best[0]:
            best = (key, e)
    return best[1] if best else None


def _evidence_host(d: Diagnosis, hosts: list[Diagnosis]) -> Diagnosis | None:
    """The finding an exception-less piece of the same source belongs to: dynamo's banner, compile
    machinery frames, FAILED INLINING or recompile lines, a `from user code:` block or a wrapper that
    points at the root cause above, printed beside the crash (or warning) that shows its exception
    (the nearest one)."""
    if (d.evidence is None and d.exception is not None) or not d.occurrences:
        return None
    src, line = d.occurrences[0].source, d.occurrences[0].line
    best: tuple[int, Diagnosis] | None = None
    for e in hosts:
        if e is d or e.fatal < d.fatal or not e.occurrences:
            continue
        if d.culprit is not None and e.culprit is not None and (d.culprit.file, d.culprit.line) != (
                e.culprit.file, e.culprit.line) and not _contains(e.chain, (d.culprit,)):
            continue
        near = [abs(o.line - line) for o in e.occurrences if o.source == src]
        if near and (best is None or min(near) < best[0]):
            best = (min(near), e)
    return best[1] if best else None


MAX_ANNOUNCE_GAP = 60  # lines from a warning to the error it announced (the recompile limit's is 6)


def _announced_host(d: Diagnosis, hosts: list[Diagnosis]) -> Diagnosis | None:
    """The crash a warning announced: dynamo's untyped warning (the recompile limit) followed, in the
    same source, by the fatal error of the same signature (FailOnRecompileLimitHit) is that error."""
    if d.fatal or (d.exception is not None and d.exception[0]) or not d.occurrences or d.signature is None:
        return None
    src, line = d.occurrences[0].source, d.occurrences[0].line
    for e in hosts:
        if e.fatal and e.signature == d.signature and any(
                o.source == src and 0 < o.line - line <= MAX_ANNOUNCE_GAP for o in e.occurrences):
            return e
    return None


def _fold_reraises(diags: list[Diagnosis]) -> list[Diagnosis]:
    """One crash, one report: a re-raise that quotes a dynamo crash, and an exception-less piece of a
    crash (its banner, frames or log line, cut from the rest), are occurrences of that crash."""
    typed = [d for d in diags if _typed_dynamo(d)]
    shown = [d for d in diags if d.family == "dynamo" and d.evidence is None and d.exception is not None]
    if not shown:
        return diags
    out = {id(d): d for d in diags}
    into: dict[int, int] = {}
    for d in diags:
        h = _quoted_host(d, typed) or _evidence_host(d, shown) or _announced_host(d, typed)
        if h is not None:
            into[id(d)] = id(h)

    def root(i: int) -> int:
        seen = {i}
        while i in into and into[i] not in seen:
            i = into[i]
            seen.add(i)
        return i

    for d in diags:
        if id(d) in into:
            r = root(id(d))
            if r == id(d):  # a cycle (two copies quoting each other): keep this one
                del into[id(d)]
                continue
            out[r] = _absorb(out[r], d)
    return [out[id(d)] for d in diags if id(d) not in into]


def merge(diagnoses: Iterable[Diagnosis]) -> list[Diagnosis]:
    """One diagnosis per distinct crash, with every occurrence (rank, file, line) kept."""
    by_id: dict[str, Diagnosis] = {}
    order: list[str] = []
    for d in diagnoses:
        cur = by_id.get(d.id)
        if cur is None:
            by_id[d.id] = d
            order.append(d.id)
            continue
        best = d if _richness(d) > _richness(cur) else cur
        occ = tuple(dict.fromkeys(cur.occurrences + d.occurrences))
        ctx = best.context
        if ctx.fullgraph is None:
            other = cur if best is d else d
            if other.context.fullgraph is not None:
                ctx = other.context
        by_id[d.id] = replace(best, occurrences=occ, context=ctx, fatal=cur.fatal or d.fatal)
    out = _fold_reraises(_fold_fragments(_fold_location_only(by_id[i] for i in order)))
    first = {d.id: n for n, d in enumerate(out)}
    out.sort(key=lambda d: (not d.fatal, -d.confidence, first[d.id]))
    return out
