"""Matches in, diagnoses out: culprit, context-aware ranked fixes, fingerprints, dedup across ranks."""

from __future__ import annotations

import re
from collections.abc import Callable, Iterable

from . import recache
from ._struct import replace
from .catalog import HINT_KINDS, Catalog, FixTemplate, LibraryRule, Signature, search
from .context import Facts, compile_off_flag, infer_context, parse_version
from .culprit import entry_of, is_machinery, module_of, owner_of, package_of, source_root
from .evidence import DYNAMO_EXC_PREFIXES, is_compile_machinery
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
    "callee": "a call it cannot trace",
    "entry.function": "the library function called from the compiled region",
    "entry.qualified": "the library function called from the compiled region",
    "server.off_flag": "the server option that turns off compilation",
    "culprit.source": "that line",
    "caller.where": "the line of your code that calls into the library (above the frames shown)",
    "caller.source": "(the calling line is not in the log)",
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
        # the line too: two different breaks in two `forward`s of one file are two findings; every copy
        # of one crash (each rank's, a re-raise's) names the same frame and line
        where = f"{tail}:{t.culprit.function}:{t.culprit.line}"
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
    # A cut paste may show no frame above the library's: its outermost visible frame is then the entry.
    cut_above = entry is not None and caller is None and bool(t.chain) and entry is t.chain[0] \
        and owner_of(c, None) == "third-party"
    if entry is not None and (caller is not None or cut_above):
        v["entry.function"] = entry.function
        v["entry.file"] = entry.file
        v["entry.short"] = short_path(entry.file)
        v["entry.line"] = str(entry.line)
        mod = module_of(entry.file, source_root(t.chain))
        v["entry.qualified"] = f"{mod}.{entry.function}" if mod else entry.function
    if entry is not None and caller is not None:
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
    for key, text in api_forms(cat, ctx).items():
        v[key] = render_template(text, v)
    return v


def api_forms(cat: Catalog, ctx: Context) -> dict[str, str]:
    """`api.<name>` for each torch API of _torch_api.toml, spelled for the torch release in the log; with
    no release known, the newest spelling and the note on what each release needs."""
    ver = parse_version(dict(ctx.versions).get("torch", ""))
    out: dict[str, str] = {}
    for name in dict.fromkeys(n for n, _lo, _t in cat.api_forms):
        known = [(lo, t) for n, lo, t in cat.api_forms if n == name and lo is not None]
        note = next((t for n, lo, t in cat.api_forms if n == name and lo is None), "")
        pick = next((t for lo, t in known if ver is not None and ver[:2] >= lo), None)
        if pick is not None:
            out[f"api.{name}"] = pick
        elif known:
            newest = known[0][1]
            out[f"api.{name}"] = newest + (("\n" if "\n" in newest else " ") + note if note else "")
    return out


def call_shape(t: Targets, owner: str, caller: Frame | None, cat: Catalog, entry: Frame | None = None) -> str:
    """What the call site does with the value (context.toml [[call_shapes]]): the user's line that calls
    into a third-party culprit, else the culprit's own line; or what the called function is (an
    nn.Module's forward: a whole block, which no custom op can stand in for)."""

    if owner == "third-party" and entry is not None:
        for shape, pat in cat.entry_shapes:
            if search(pat, entry.function.rsplit(".", 1)[-1]):
                return shape
    if owner == "third-party" and caller is None:
        return "tensor"  # the call site is not in the log: nothing says a custom op cannot stand in
    site = caller if owner == "third-party" else t.culprit
    src = (site.source or "") if site is not None else ""
    for shape, pat in cat.call_shapes:
        if src and search(pat, src):
            return shape
    return "tensor"


_SENTENCE_END = recache.compile(r"[.!?)]\s*$")


def dynamo_hints(record: CrashRecord, cat: Catalog) -> list[tuple[str, str]]:
    """The `Hint:` lines of a 2.7+ dynamo message, each with its kind (context.toml [[hints]]; "advice"
    when no row names it). torch splits some hints over two list items ("... to allow ", "Dynamo to trace
    through NumPy."), printed as two Hint lines: a line that ends mid-sentence is joined with the next."""
    merged: list[str] = []
    for h in record.dynamo.hints if record.dynamo is not None else ():
        h = h.strip()
        if merged and not _SENTENCE_END.search(merged[-1]):
            merged[-1] = f"{merged[-1]} {h}"
        elif h:
            merged.append(h)
    return [(next((k for k, pat in cat.hint_kinds if search(pat, h)), "advice"), h) for h in merged]


def _when_ok(tmpl: FixTemplate, cond: dict[str, str]) -> bool:
    for key, allowed in tmpl.when:
        got = cond.get(key, "")
        if key == "torch":
            if not any(_version_ok(spec, got) for spec in allowed):
                return False
        elif got not in allowed:
            return False
    return True


def _version_ok(spec: str, version: str) -> bool:
    """`>=2.4`, `==2.1`, `<2.2` or `unknown` against the torch version the log shows."""
    ver = parse_version(version)
    if spec == "unknown":
        return ver is None
    if ver is None:
        return False
    op, num = (spec[:2], spec[2:]) if spec[:2] in (">=", "==") else (spec[:1], spec[1:])
    want = tuple(int(x) for x in num.split("."))
    have = ver[: len(want)]
    return have >= want if op == ">=" else have == want if op == "==" else have < want


_BACKTICKED = recache.compile(r"`\{([a-z_][a-z0-9_.]*)\}`")


def render_template(text: str, values: dict[str, str], fallback: dict[str, str] | None = None) -> str:
    """Fill `{var}`s. A variable the log did not give reads as the template's (or the catalog's) fallback
    prose, without the backticks that would quote it as code; never as a leftover placeholder."""
    fb = fallback or {}

    def missing(key: str) -> str:
        return fb.get(key) or _FALLBACK.get(key) or "the " + key.rsplit(".", 1)[-1].replace("_", " ")

    def quoted(m: re.Match[str]) -> str:
        key = m.group(1)
        return f"`{values[key]}`" if key in values else missing(key)

    def sub(m: re.Match[str]) -> str:
        key = m.group(1)
        return values[key] if key in values else missing(key)

    return _VAR.sub(sub, _BACKTICKED.sub(quoted, text))


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


def _callee_below(callee: str | None, culprit: Frame | None) -> str:
    """Whether what dynamo rejected is reached below the culprit's line rather than called on it: "true" when
    the line's source is known and does not name the callee (`re.match(...)` reaching `frozenset.__contains__`),
    "false" when it names it (`str(x)`), "unknown" without either. dynamo's hint names the callee, so it is
    advice about the culprit's own line only in the second case."""
    if not callee or culprit is None or not culprit.source:
        return "unknown"
    name = callee.rsplit(".", 1)[-1].strip("`'\" ")
    return "false" if name and name in culprit.source else "true"


def _applies(f: FixTemplate, ctx: Context) -> bool:
    key = "unknown" if ctx.fullgraph is None else ("fullgraph" if ctx.fullgraph else "graph-break")
    if key not in f.contexts:
        return False
    if f.servers and (ctx.server or "none") not in f.servers:
        return False
    return not (f.modes and (ctx.mode or "none") not in f.modes)


def _suppress_holds(rule: LibraryRule, t: Targets) -> bool:
    """Whether a library rule's `suppress` applies: always, or with `suppress_inside` only where a frame the
    rule matched is an outer frame of the culprit (the culprit runs inside a traced functools cache, so
    computing its value once changes nothing); a culprit line that calls into that frame moves the whole
    call out."""
    if not rule.suppress_inside or t.culprit is None:
        return True
    here = (t.culprit.file, t.culprit.line)
    at = next((i for i, f in enumerate(t.chain) if (f.file, f.line) == here), None)
    if at is None:
        return True
    pats = [p for key, ps in rule.matcher.all_rules() if key == "frames" for p in ps]
    return any(search(p, f"{f.file}:{f.function}") for f in t.chain[:at] for p in pats)


def _hard_requirement(key: str) -> bool:
    """A value no prose can stand in for: the server's flag, a version the fix names."""
    return key == "server.off_flag" or key.startswith("version.")


def _render_fixes(
    templates: Iterable[tuple[FixTemplate, str]], values: dict[str, str], ctx: Context,
    cond: dict[str, str] | None = None, relaxed: bool = False,
) -> list[Fix]:
    """The templates that apply, rendered. `relaxed`: a template whose required values the log lacks is
    rendered with its fallback wording too (used when nothing else is left), unless a hard requirement is
    missing."""
    fixes: list[Fix] = []
    seen_titles: set[str] = set()
    for tmpl, origin in sorted(templates, key=lambda x: x[0].rank):
        if not _applies(tmpl, ctx) or not _when_ok(tmpl, cond or {}):
            continue
        if tmpl.kind == "custom-op" and (cond or {}).get("call_shape", "tensor") != "tensor":
            continue  # a custom op returns tensors: it cannot stand in for a call whose value steers Python
        if any(r not in values and (not relaxed or _hard_requirement(r)) for r in tmpl.requires):
            continue
        fb = dict(tmpl.fallback)
        title = render_template(tmpl.title, values, fb)
        if title in seen_titles:
            continue
        seen_titles.add(title)
        line_s = render_template(tmpl.line, values) if tmpl.line else None
        fixes.append(
            Fix(
                rank=tmpl.rank,
                kind=tmpl.kind,
                title=title,
                detail=reflow(render_template(tmpl.detail, values, fb)),
                file=render_template(tmpl.file, values) if tmpl.file and tmpl.file.strip("{}") in values or (
                    tmpl.file and "{" not in tmpl.file) else None,
                line=int(line_s) if line_s and line_s.isdigit() else None,
                safety=tmpl.safety,
                source=origin,
                compile_off=tmpl.compile_off,
            )
        )
    return fixes


LIBRARY_PATCH = "Library patch: "
# What a remedy that turns compilation off is: a way to see whether the compiled path is the cause, not a fix.
DIAGNOSTIC_STEP = "Diagnostic step, not a fix: "
# Fix kinds that change the culprit's own lines; a config switch, a flag or an upgrade that names the culprit's
# file as where it applies is still something the user sets without editing the package.
CODE_EDITS = frozenset({"precompute", "rewrite", "decorate"})


# A signature whose culprit is code torch.compile called, never traced (a custom backend): no opaque op of it.
COMPILER_CALLED = "compiler-called"


def order_fixes(fixes: list[Fix], owner: str, culprit: Frame | None, sig: Signature) -> list[Fix]:
    """Fixes by who can make them: for a crash in code that fails in eager too, the signature's own
    environment/code fix first; then what the user can do without editing an installed third-party
    package (its custom op at their call site, a release, a flag); then edits of that package's line,
    labelled a library patch; information and reports last. Within a group the catalog's rank holds."""
    # code that fails in eager too, or that the compiler called and never traced (a custom backend): the
    # signature's own fix of that code comes first, whoever owns it
    own_first = "eager-too" in sig.tags or COMPILER_CALLED in sig.tags
    library = owner in ("third-party", "torch")

    def group(f: Fix) -> int:
        if f.compile_off:
            return 6  # turning compilation off hides the failure: after every fix and report
        if f.kind in ("report", "info"):
            return 5
        if own_first and f.source == sig.id and f.kind in ("environment", "rewrite"):
            return 0
        if library and culprit is not None and f.file == culprit.file and f.kind in CODE_EDITS:
            return 4  # an edit of an installed package's own line (torch's public code included)
        if library and f.kind == "workaround":
            return 4  # after the library patches (ranked before it in the catalog)
        if library and f.source != sig.id:
            return 1  # what the library's own rule knows: its release, its flag, its custom op
        if library and f.kind == "custom-op":
            return 2  # the package's entry call made opaque at the user's call site: no edit of the package
        return 3

    out = []
    for f in sorted(fixes, key=group):
        if group(f) == 4 and f.kind != "workaround" and not f.title.startswith(LIBRARY_PATCH):
            f = replace(f, title=LIBRARY_PATCH + f.title)
        if f.compile_off and not f.title.startswith(DIAGNOSTIC_STEP):
            f = replace(f, title=DIAGNOSTIC_STEP + f.title[0].lower() + f.title[1:])
        if not out and f.title.startswith("Or "):  # a later-ranked alternative that came out first
            f = replace(f, title=f.title[3].upper() + f.title[4:])
        out.append(f)
    return [replace(f, rank=i) for i, f in enumerate(out, 1)]


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
    if "no-culprit" in sig.tags:
        # the frames in view are a wrapper's re-raise or a run of compiled code, not what dynamo traced
        t = replace(t, culprit=None, chain=())
    if t.culprit is None and sig.family == "dynamo":
        where = located(record, cat) or ("located-from-log" in sig.tags and located_in_log(facts)) or None
        if where is not None:
            t = replace(t, culprit=where, chain=t.chain or (where,))
    ctx = infer_context(record, t, facts, cat)
    # the fixes name the function a resume frame continues; the culprit stays the frame as the log prints it
    values = _vars(replace(t, culprit=unresumed(t.culprit), chain=tuple(unresumed(f) for f in t.chain)),
                   m.fields, ctx, cat)
    hints = dynamo_hints(record, cat)
    if record.dynamo is not None and record.dynamo.gb_type:
        values["dynamo.gb_type"] = record.dynamo.gb_type.strip()
    # dynamo's advice, else its generic or risky advice (offered after the fixes that name the place)
    advice = [h for k, h in hints if k == "advice"] or [h for k, h in hints if k in ("generic", "unsafe")]
    if advice:
        values["dynamo.hint"] = advice[0]
        values["dynamo.hints"] = "\n".join(f"    {h}" for h in advice)
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
    suppressed = {k for rule in libs if _suppress_holds(rule, t) for k in rule.suppress}
    for f in sig.fixes:
        if f.kind in suppressed:
            continue  # the library rule knows this kind of fix does not work here
        # A library's own fix of the same kind (its custom op, its release) replaces the generic one.
        if f.kind in lib_kinds and f.kind in ("custom-op", "upgrade"):
            continue
        templates.append((f, sig.id))
    entry, caller = entry_of(t.chain, t.culprit)
    owner = owner_of(t.culprit, caller)
    if owner == "third-party" and sig.family == "dynamo" and "eager-too" not in sig.tags \
            and COMPILER_CALLED not in sig.tags \
            and not any(f.kind == "custom-op" for f, _o in templates):
        # someone else's package: its entry call as an opaque op at the user's call site, whatever it hit
        templates += [(f, sig.id) for f in cat.third_party_fixes]
    cond = {
        "culprit_owner": owner,
        "call_shape": call_shape(t, owner, caller, cat, entry),
        "torch": dict(ctx.versions).get("torch", ""),
        "eager_too": "true" if "eager-too" in sig.tags else "false",
        "dynamo_hint": next((k for k in HINT_KINDS if any(k == h for h, _t in hints)), "none"),
        "callee_below": _callee_below(t.callee, t.culprit),
    }
    rendered = _render_fixes(templates, values, ctx, cond)
    if not rendered:
        # The log lacked every fix's values (no frames, a cut paste): the signature's fixes in their fallback
        # wording, never an empty list.
        rendered = _render_fixes(templates, values, ctx, cond, relaxed=True)
    fixes = order_fixes(rendered, owner, t.culprit, sig)
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
        fatal=record.kind in ("traceback", "partial") and not swallowed_by_suppress_errors(record, facts),
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
        warnings=one_note_each(warnings, static_next=bool(nxt)),
        fields=tuple(sorted(m.fields.items())),
        complete=record.complete and bool(exception and exception[0]),
        evidence=record.evidence,
        announces=bool(record.chain) and record.chain[-1].cause_link is not None,
        unplaced=not (exception and exception[0]) and bool(t.chain) and _traceback_head(record, t.chain),
        causes=tuple((b.type, b.message.split("\n", 1)[0]) for b in record.chain
                     if b is not headline and b.type and b.message),
        outer=_outer_frames(record),
    )


def _outer_frames(record: CrashRecord) -> tuple[tuple[str, int], ...]:
    """The frames a traceback of the record shows before torch.compile's entry frame (eval_frame)."""
    out: list[tuple[str, int]] = []
    for b in record.chain:
        at = next((i for i, f in enumerate(b.frames)
                   if f.file.replace("\\", "/").endswith(COMPILE_ENTRY[0])), None)
        if at:
            out += [(f.file, f.line) for f in b.frames[:at]]
    return tuple(dict.fromkeys(out))


TRACEBACK_HEADER = "Traceback (most recent call last):"


def _traceback_head(record: CrashRecord, chain: tuple[Frame, ...]) -> bool:
    """Whether `chain` is the head of a traceback whose exception line is out of view: its frames are a
    traceback block's, or its first frame is the one printed right under `Traceback (most recent call
    last):` (a `from user code:` block never starts there; the trailer after a cut made them look like one)."""
    if any(chain == b.frames for b in record.chain):
        return True
    first = f'File "{chain[0].file}", line {chain[0].line},'
    text = record.text
    return any(t.rstrip().endswith(TRACEBACK_HEADER) and first in text[i + 1] for i, t in enumerate(text[:-1]))


NEXT_NOTE = "Next in this chain:"


def one_note_each(notes: list[str], static_next: bool) -> tuple[str, ...]:
    """Each piece of advice once: of several library rules' "Next in this chain:" notes (a specific rule and
    the library's general one) only the first, the most specific; and none of them under that heading when
    the diagnosis already lists the next blockers found statically (`next`), which renderers title so."""
    out: list[str] = []
    chain_note = False
    for n in dict.fromkeys(x for x in notes if x):
        if n.startswith(NEXT_NOTE):
            if chain_note:
                continue
            chain_note = True
            if static_next:
                rest = n[len(NEXT_NOTE):].strip()
                n = rest[:1].upper() + rest[1:]
        out.append(n)
    return tuple(out)


# dynamo's continuation of `f` after a graph break at line N: the code is `f`'s, and `f` is what a person edits
_RESUME = recache.compile(r"^torch_dynamo_resume_in_(?P<f>\w+)_at_\d+$")


def unresumed(f: Frame | None) -> Frame | None:
    """The frame with `torch_dynamo_resume_in_<f>_at_<N>` named `<f>`, the function it continues."""
    if f is None:
        return None
    name = f.function
    while (m := _RESUME.match(name)) is not None:
        name = m.group("f")
    return f if name == f.function else replace(f, function=name)


def swallowed_by_suppress_errors(record: CrashRecord, facts: Facts) -> bool:
    """The traceback that suppress_errors logs under its "WON'T CONVERT ... due to:" lines: dynamo swallowed
    the exception and the run went on eagerly (a finding, not a crash)."""
    return facts.in_marked_record("suppressed", record.source, record.start_line)


# An FX graph dump under a failing node (`While executing %item : ... = call_method[target=item](...)`,
# then `GraphModule: class GraphModule(...)` with `# File: /p/x.py:76 in f, code: y = t.tolist()` before the
# nodes each source line made): the failing node's source comment names the line dynamo traced.
_FX_FAILING_NODE = recache.compile(r"While executing %(?P<node>\w+)\b")
_FX_SOURCE_COMMENT = recache.compile(
    r"^\s*# File: (?P<file>[^\n,]+?\.py):(?P<line>\d+) in (?P<function>[\w<>.]+), code: ")
_FX_NODE_LINE = recache.compile(r"^\s*(?P<node>\w+)\b[^=]*= ")


def fx_node_source(lines: Iterable[str]) -> Frame | None:
    """The `# File:` comment above the failing node's own line in the graph dump, if both are in view."""
    node: str | None = None
    comment: re.Match[str] | None = None
    for text in lines:
        if node is None:
            m = _FX_FAILING_NODE.search(text)
            node = m.group("node") if m else None
            continue
        c = _FX_SOURCE_COMMENT.match(text)
        if c is not None:
            comment = c
            continue
        n = _FX_NODE_LINE.match(text)
        if comment is not None and n is not None and n.group("node") == node:
            return Frame(comment.group("file"), int(comment.group("line")), comment.group("function"))
    return None


def located(record: CrashRecord, cat: Catalog) -> Frame | None:
    """The file and line that dynamo's own headers in the record name (context.toml [[locations]]), for a
    record whose frames were cut. A path cut on the left ("mp/dyn/x.py") takes the full path another
    header of the record gives for the same file."""

    text = "\n".join(x for x in (record.lead or "", *(b.message for b in record.chain), *record.text) if x)
    if not text:
        return None
    if "While executing %" in text and "# File: " in text:
        node = fx_node_source(text.splitlines())
        if node is not None:
            return node
    found: list[Frame] = []
    for pat in cat.location_patterns:
        m = search(pat, text)
        if m:
            g = m.groupdict()
            found.append(Frame(g["file"], int(g["line"]), g.get("function") or "<module>"))
    if not found:
        return None
    best = found[0]
    if not best.file.startswith(("/", "<")) and ":" not in best.file[:3]:
        full = next((f.file for f in found[1:] if f.file.endswith("/" + best.file.lstrip("./"))
                     or f.file.endswith(best.file)), None)
        if full:
            best = replace(best, file=full)
    return best


def located_in_log(facts: Facts) -> Frame | None:
    """Where the log's recompile lines say dynamo was (context.toml facts `located.*`): the failing guard's
    user stack first, else the compiled function."""
    v = facts.values
    for kind in ("guard", "compiled"):
        f, ln = v.get(f"located.{kind}.file"), v.get(f"located.{kind}.line")
        if f and ln and ln.isdigit():
            return Frame(f, int(ln), v.get(f"located.{kind}.function") or "<module>")
    return None


def _richness(d: Diagnosis) -> tuple[int, int, int, int, int]:
    """Which copy of a crash to show: the dynamo exception itself beats a wrapper that quotes it
    ("Worker failed with error '...'"), then more frames, a culprit, more fixes."""
    return (
        int(d.exception is not None and d.exception[0].startswith(DYNAMO_EXC_PREFIXES)),
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


def _fix_weight(fixes: tuple[Fix, ...]) -> tuple[int, int]:
    """How much of the log a fix list could use: fixes that name a place to change, then fixes at all (one
    rendered in fallback wording names none)."""
    return sum(f.file is not None for f in fixes), len(fixes)


def _absorb(host: Diagnosis, part: Diagnosis) -> Diagnosis:
    ctx = host.context if host.context.fullgraph is not None else (
        part.context if part.context.fullgraph is not None else host.context)
    extra = {}
    if part.signature == host.signature and _fix_weight(part.fixes) > _fix_weight(host.fixes) and (
            part.culprit is None or not _placeless(part)):
        # the same signature, and this copy had the values more of its fixes need (the recompile
        # limit's warning names the failing guard; the error it announced does not); never a copy's whose
        # culprit is only the call into the compiled function or where the log cut it: its fixes are for there
        extra = {"fixes": part.fixes, "fields": part.fields}
    if host.culprit is None and part.culprit is not None:
        # the host's copy lost its `from user code:` lines (an elided paste) and the other copy (a re-raise
        # quoting str(e) with its sections) kept them: it is the same crash, so that is its culprit
        extra["culprit"] = part.culprit
    return replace(host, occurrences=tuple(dict.fromkeys(host.occurrences + part.occurrences)), context=ctx,
                   fatal=host.fatal or part.fatal, **extra)


def _typed_dynamo(d: Diagnosis) -> bool:
    return d.exception is not None and d.exception[0].startswith(DYNAMO_EXC_PREFIXES)


MIN_QUOTED = 12  # a shorter message is found inside another only as a whole quoted word run


def _quotes(said: str, msg: str) -> bool:
    """Whether the message `said` quotes `msg`: anywhere when it is long enough to be that message; a
    short one (`Tensor.item`) only where a quote, colon or blank bounds it on both sides."""
    if len(msg) >= MIN_QUOTED:
        return msg in said
    if len(msg) < 4:
        return False
    k = said.find(msg)
    while k >= 0:
        before, after = said[k - 1 : k] or " ", said[k + len(msg) : k + len(msg) + 1] or " "
        if before in " '\":(" and after in " '\"),\\":
            return True
        k = said.find(msg, k + 1)
    return False


# A rule of `=`, `_` or `-` (pytest's session footer `==== 1 failed in 2.1s ====`, a section line) is never
# part of an exception message: a paste that lost its newlines ran the message on into it.
RUN_ON_RULE = recache.compile(r"\s[=_-]{10,}(?:\s|$)")


def _copy_host(d: Diagnosis, hosts: list[Diagnosis]) -> Diagnosis | None:
    """The crash a frameless copy of its exception line belongs to: pytest's short summary (`FAILED
    test - Type: first line of the message`), a log line repeating the error: the same type, and a
    message that is the start of that crash's (a summary cuts it; a paste that lost its newlines runs it on
    into the session's footer rule). The nearest one printed before it."""
    if d.chain or d.exception is None or not d.exception[0] or not d.fatal or not d.occurrences:
        return None
    said = d.exception[1]
    rule = RUN_ON_RULE.search(said)
    said = (said[: rule.start()] if rule else said).strip().rstrip(".…").rstrip()
    if len(said) < MIN_QUOTED:
        return None
    src, line = d.occurrences[0].source, d.occurrences[0].line
    best: tuple[int, Diagnosis] | None = None
    for e in hosts:
        if e is d or not e.fatal or not e.chain or e.exception is None or e.exception[0] != d.exception[0]:
            continue
        if not e.exception[1].strip().startswith(said):
            continue
        gaps = [line - o.line for o in e.occurrences if o.source == src and o.line <= line]
        if gaps and (best is None or min(gaps) < best[0]):
            best = (min(gaps), e)
    return best[1] if best else None


QUOTE_OPENERS = ("'", '"', ":")  # where a re-raise's text ends when the message it quotes is empty


def _quotes_with_sections(d: Diagnosis, said: str, e: Diagnosis, msg: str) -> bool:
    """A quote too short to find by its text (str(e) of `InternalTorchDynamoError(str(StopIteration()))` is
    empty: "Worker failed with error '" ends where the quote opened; a KeyError's is `96`), shown by what
    came with it: the dynamo sections of str(e) (`from user code:`) that end at e's culprit."""
    if d.culprit is None or e.culprit is None or (d.culprit.file, d.culprit.line) != (e.culprit.file, e.culprit.line):
        return False
    return said == msg or (not msg and said.endswith(QUOTE_OPENERS))


def _cut_quote(d: Diagnosis, said: str, msg: str) -> bool:
    """A quote that lost the server's type with its head and was cut short (a hard wrap cut its first line
    before any certain cut showed the wrap's width: `Piecewise CUDA Graph failed with error: Consider
    annotating your code using torch._check*(). Could` + ` not guard on ...`): the start of the message."""
    return d.exception is not None and not d.exception[0] and MIN_QUOTED <= len(said) < len(msg) \
        and msg.startswith(said)


def _quoted_host(d: Diagnosis, hosts: list[Diagnosis]) -> Diagnosis | None:
    """The crash (of `hosts`) whose message `d`'s exception quotes: a server's re-raise ("Piecewise CUDA Graph
    failed with error: ...", "Worker failed with error '...'") is that crash again, not another one.
    Its frames are the server's own, so they say nothing; of several such crashes, the nearest one
    printed before it."""
    if d.exception is None or _typed_dynamo(d) or not d.fatal or not d.occurrences:
        return None
    said = d.exception[1].strip()
    src, line = d.occurrences[0].source, d.occurrences[0].line
    best: tuple[tuple[int, int], Diagnosis] | None = None
    for e in hosts:
        # its first line: a server quotes str(e)'s head, or all of it on one line
        msg = e.exception[1].strip().split("\n", 1)[0].strip() if e.exception else ""
        if e is d or not e.fatal or (msg == said and d.exception[0]):
            continue
        if not (_quotes(said, msg) or _quotes_with_sections(d, said, e, msg) or _cut_quote(d, said, msg)):
            continue
        gaps = [line - o.line for o in e.occurrences if o.source == src]
        key = min(((g < 0, abs(g)) for g in gaps), default=(True, 1 << 30))
        if best is None or key < best[0]:
            best = (key, e)
    return best[1] if best else None


def _quoting_host(d: Diagnosis, hosts: list[Diagnosis]) -> Diagnosis | None:
    """The dynamo crash that quotes `d`: an inner error logged before dynamo wrapped it (fake_tensor's
    "fake tensor raised TypeError" traceback, then `Unsupported: TypeError op: <that message>`, or 2.7+'s
    `TypeError when making fake tensor call` with the message in its debug context, where the two read the
    same fields) is that crash, printed early. The nearest such crash printed after it."""
    if d.exception is None or not d.exception[0] or _typed_dynamo(d) or not d.fatal or not d.occurrences:
        return None
    said = d.exception[1].strip().split("\n", 1)[0].strip()
    if len(said) < MIN_QUOTED:
        return None
    src, line = d.occurrences[0].source, d.occurrences[0].line
    read = {k: v for k, v in d.fields if k != "callee"}  # what the signature read off the message
    best: tuple[int, Diagnosis] | None = None
    for e in hosts:
        if e is d or not e.fatal or e.exception is None:
            continue
        same_fields = d.culprit is None and bool(read) and e.signature == d.signature \
            and read.items() <= dict(e.fields).items()
        if said not in e.exception[1] and not same_fields:
            continue
        gaps = [o.line - line for o in e.occurrences if o.source == src and 0 < o.line - line <= (
            1 << 30 if said in e.exception[1] else MAX_ANNOUNCE_GAP)]
        if gaps and (best is None or min(gaps) < best[0]):
            best = (min(gaps), e)
    return best[1] if best else None


def _cut_in_compile(d: Diagnosis) -> bool:
    """A traceback's head, cut inside torch.compile's own frames (another rank's lines took over the
    stream): its "culprit" is only the call into the compiled function, not where dynamo failed."""
    if d.exception is not None or d.complete or not d.chain:
        return False
    inner = d.chain[-1]
    return is_compile_machinery(inner) or "torch/_dynamo/" in inner.file.replace("\\", "/")


COMPILE_ENTRY = ("torch/_dynamo/eval_frame.py", "torch/_dynamo/convert_frame.py")


def _entry_call(d: Diagnosis) -> bool:
    """Whether `d`'s culprit is only the program's call into a compiled function: the first compile-machinery
    frame after it is torch.compile's frame evaluation (eval_frame's `_fn`, convert_frame), none before it.
    A copy that lost the `from user code:` block names that call; it says nothing of where dynamo failed."""
    if d.culprit is None:
        return False
    key = (d.culprit.file, d.culprit.line)
    if any((o.source, *key) in _OUTER_SEEN for o in d.occurrences):
        # another copy's traceback shows this frame on the program's path into the compiled function: a copy
        # that names it (another rank's frames run into its stack) names no place where dynamo stopped
        return True
    at = next((i for i, f in enumerate(d.chain) if (f.file, f.line) == key), None)
    inner = None
    if at is not None and not any(is_machinery(f.file) for f in d.chain[:at]):
        inner = next((f for f in d.chain[at + 1 :] if is_machinery(f.file)), None)
    return inner is not None and inner.file.replace("\\", "/").endswith(COMPILE_ENTRY)


# (source, file, line) of every copy's `outer` frames, during one merge
_OUTER_SEEN: set[tuple[str, str, int]] = set()


def _entry_calls() -> Callable[[Diagnosis], bool]:
    """`_entry_call`, each answer kept for one merge: it is asked of every pair of copies there."""
    cache: dict[int, tuple[Diagnosis, bool]] = {}  # holding the diagnosis keeps its id from being reused

    def entry_call(d: Diagnosis) -> bool:
        hit = cache.get(id(d))
        if hit is None:
            hit = cache[id(d)] = (d, _entry_call(d))
        return hit[1]

    return entry_call


def _placeless(d: Diagnosis) -> bool:
    """Whether `d` names no place where dynamo failed: no culprit, only the call into the compiled function,
    or only the frame where the log cut its traceback."""
    return d.culprit is None or d.unplaced or _cut_in_compile(d) or _entry_call(d)


def _nearest(d: Diagnosis, hosts: list[Diagnosis]) -> Diagnosis | None:
    """Of `hosts`, the one printed nearest `d`'s first occurrence in its source (the first of equals); one
    with no occurrence in that source is never it."""
    src, line = d.occurrences[0].source, d.occurrences[0].line
    near = [(min(gaps), i) for i, e in enumerate(hosts)
            if (gaps := [abs(o.line - line) for o in e.occurrences if o.source == src])]
    return hosts[min(near)[1]] if near else None


def _evidence_host(d: Diagnosis, hosts: list[Diagnosis]) -> Diagnosis | None:
    """The finding an exception-less piece of the same source belongs to: dynamo's banner, compile
    machinery frames, FAILED INLINING or recompile lines, a `from user code:` block or a wrapper that
    points at the root cause above, printed beside the crash (or warning) that shows its exception
    (the nearest one)."""
    if (d.evidence is None and d.exception is not None) or not d.occurrences:
        return None
    fit: list[Diagnosis] = []
    anywhere = _placeless(d)
    src, line = d.occurrences[0].source, d.occurrences[0].line
    for e in hosts:
        if e is d or e.fatal < d.fatal or not e.occurrences:
            continue
        if d.evidence == "reraise" and not any(o.source == src and o.line < line for o in e.occurrences):
            continue  # "See root cause above": a crash printed before it
        if d.culprit is not None and e.culprit is not None and not anywhere and (d.culprit.file, d.culprit.line) != (
                e.culprit.file, e.culprit.line) and not _contains(e.chain, (d.culprit,)):
            continue
        fit.append(e)
    return _nearest(d, fit)


MAX_ANNOUNCE_GAP = 60  # lines from a warning to the error it announced (the recompile limit's is 6)


def _announced_host(d: Diagnosis, hosts: list[Diagnosis]) -> Diagnosis | None:
    """The crash a warning announced: dynamo's untyped warning (the recompile limit) followed, in the
    same source, by the fatal error of the same signature (FailOnRecompileLimitHit) is that error; so is
    a graph-break warning (2.1-2.6 warn_once) before the fullgraph error that rejects the same callee."""
    if d.fatal or (d.exception is not None and d.exception[0]) or not d.occurrences or d.signature is None:
        return None
    src, line = d.occurrences[0].source, d.occurrences[0].line
    for e in hosts:
        same = e.signature == d.signature or (d.callee is not None and e.callee == d.callee)
        if e.fatal and same and any(
                o.source == src and 0 < o.line - line <= MAX_ANNOUNCE_GAP for o in e.occurrences):
            return e
    return None


def _caused_host(d: Diagnosis, hosts: list[Diagnosis]) -> Diagnosis | None:
    """The crash an exception led to: one whose record ended announcing "the following exception" (dynamo's
    ObservedUserStopIteration, printed without frames, before its `Unsupported: Observed exception`), when a
    logger's prefix on the rest cut the chain in two. The next fatal report printed after it in that source,
    of its rank first."""
    if not d.announces or d.chain or not d.fatal or not d.occurrences:
        return None  # with frames of its own it is a crash's copy cut at its chain line, not a bare cause
    best: tuple[tuple[bool, int], Diagnosis] | None = None
    for o in d.occurrences:
        for e in hosts:
            # the caused exception may have lost its type to the cut (`Observed exception` alone)
            if e is d or not e.fatal or e.exception is None or not (e.exception[0] or e.exception[1].strip()) or (
                    d.exception is not None and e.exception[0] == d.exception[0]):
                continue  # the caused exception is another one; the same one again is a copy of `d`
            for h in e.occurrences:
                # on its line too: a paste that lost its newlines, or quoted the chain in one message
                if h.source == o.source and h.line >= o.line:
                    key = (h.rank != o.rank, h.line - o.line)
                    if best is None or key < best[0]:
                        best = (key, e)
    return best[1] if best else None


def _introduced_host(d: Diagnosis, hosts: list[Diagnosis]) -> Diagnosis | None:
    """The crash a logged error line introduced: torch logs `Error while creating guard:` (and the like) and
    then the traceback of what it raised; a paste that cut them apart leaves the line alone, untyped, with no
    frames. It is the crash of its finding's family printed next after it in that source."""
    if d.exception is None or d.exception[0] or d.complete or d.chain or d.culprit is not None or not d.fatal \
            or not d.occurrences:
        return None
    src, line = d.occurrences[0].source, d.occurrences[0].line
    best: tuple[int, Diagnosis] | None = None
    for e in hosts:
        if e is d or not e.fatal or e.family != d.family or e.exception is None or not e.exception[0]:
            continue
        gaps = [o.line - line for o in e.occurrences if o.source == src and 0 < o.line - line <= MAX_ANNOUNCE_GAP]
        if gaps and (best is None or min(gaps) < best[0]):
            best = (min(gaps), e)
    return best[1] if best else None


def _piece_host(d: Diagnosis, hosts: list[Diagnosis]) -> Diagnosis | None:
    """Where no crash beside it kept its exception line or its place: a piece that names no place is part of
    the nearest piece printed before it whose traceback starts at the same frame (two ranks' traceback
    heads, cut by a paste's elisions: the same program's outermost call)."""
    if not d.fatal or d.exception is not None or not _placeless(d) or not d.occurrences or not d.chain:
        return None
    src, line = d.occurrences[0].source, d.occurrences[0].line
    top = (d.chain[0].file, d.chain[0].line)
    best: tuple[int, Diagnosis] | None = None
    for e in hosts:
        if e is d or not e.fatal or e.exception is not None or e.family != d.family or not e.chain \
                or (e.chain[0].file, e.chain[0].line) != top:
            continue
        gaps = [line - o.line for o in e.occurrences if o.source == src and o.line < line]
        if gaps and (best is None or min(gaps) < best[0]):
            best = (min(gaps), e)
    return best[1] if best else None


def _cut_finding_host(d: Diagnosis, hosts: list[Diagnosis]) -> Diagnosis | None:
    """A non-fatal finding that lost the frames naming its place (another rank's copy of the same log
    record, cut by the paste's end or by the other ranks' lines) is the copy that kept them: the same
    signature and message, that copy naming a culprit. The nearest such copy."""
    if d.fatal or d.culprit is not None or d.exception is None or not d.exception[1].strip() or not d.occurrences:
        return None
    fit = [e for e in hosts if e is not d and not e.fatal and e.culprit is not None and e.signature == d.signature
           and e.exception == d.exception]
    return _nearest(d, fit)


def _deeper_piece_host(d: Diagnosis, hosts: list[Diagnosis]) -> Diagnosis | None:
    """The piece that shows more of the same path: a copy (a server's re-raise with the `from user code:`
    frames it quoted, cut short) whose frames are the start of an exception-less piece's, of the same
    finding, is that piece's crash: the piece goes deeper, to where dynamo failed. The nearest one."""
    if d.culprit is None or not d.chain or not d.fatal or not d.occurrences or d.exception is None:
        return None
    mine = [(f.file, f.line) for f in d.chain]
    fit = [e for e in hosts if e is not d and e.fatal and e.signature == d.signature and len(e.chain) > len(mine)
           and [(f.file, f.line) for f in e.chain[: len(mine)]] == mine]
    return _nearest(d, fit)


def _copy_rank(d: Diagnosis, entry_call: Callable[[Diagnosis], bool]) -> tuple[bool, bool, int]:
    return d.complete, d.culprit is not None and not entry_call(d), len(d.chain)


def _same_exception_line(a: tuple[str, str], b: tuple[str, str]) -> bool:
    """The same exception line, one copy cut short or run on into the next line's text (a paste that lost
    its newlines: `... {}  from user code:`)."""
    if a[0] != b[0]:
        return False
    x, y = sorted((a[1].strip(), b[1].strip()), key=len)
    return x == y or (len(x) >= MIN_QUOTED and y.startswith(x))


def _same_exception_host(d: Diagnosis, hosts: list[Diagnosis],
                         known: Callable[[Diagnosis], set[tuple[str, int]]] | None = None,
                         entry_call: Callable[[Diagnosis], bool] = _entry_call) -> Diagnosis | None:
    """The fuller copy of the same exception: a rank's copy that lost frames among the other ranks' lines,
    or a paste's copy cut by an elision, prints the same exception line but names a shallower frame (or
    none) as its culprit. Only where its culprit is one of the fuller copy's frames: the same message raised
    at two different places is two crashes. A copy that names no place (only the call into the compiled
    function) is the fuller copy's even where that one names none either; of two copies alike but for the
    signature their text matched, the surer one is the report."""
    if d.exception is None or not d.exception[1].strip() or not d.fatal or not d.occurrences:
        return None
    # a copy that lost its type with its head (a server's `Capture cuda graph failed: ` cut off) matched what was
    # left: its finding's family says nothing, its whole message must be the other copy's
    untyped = not d.exception[0]
    if untyped and (d.culprit is not None or len(d.exception[1].strip()) < MIN_QUOTED):
        return None
    mine = (d.culprit.file, d.culprit.line) if d.culprit is not None and not entry_call(d) else None
    fit: list[Diagnosis] = []
    for e in hosts:
        if e is d or not e.fatal or e.exception is None or (e.culprit is None and mine is not None):
            continue
        if not (_same_exception_line(e.exception, d.exception) and (untyped or e.family == d.family)) and not (
                untyped and e.exception[1].strip() == d.exception[1].strip()):
            continue
        ours, theirs = _copy_rank(d, entry_call), _copy_rank(e, entry_call)
        # of two copies alike, one whose message is cut short (a hard wrap kept its break) is the other's
        cut_short = len(d.exception[1].strip()) < len(e.exception[1].strip())
        if theirs < ours or (theirs == ours and not cut_short and (e.chain != d.chain or d.culprit is None or (
                e.confidence, -e.occurrences[0].line) <= (d.confidence, -d.occurrences[0].line))):
            continue
        if mine is not None and mine not in {(f.file, f.line) for f in e.chain} and (
                known is None or mine not in known(e)):
            continue
        fit.append(e)
    return _nearest(d, fit)  # of two crashes with this exception line, the copy's neighbour


def _cut_cause_host(d: Diagnosis, hosts: list[Diagnosis]) -> Diagnosis | None:
    """The crash whose chain a copy cut before its end shows the start of: a rank's copy (or a paste) that
    stops at a cause (`RuntimeError: Failed running call_method ...` then `During handling of the above
    exception, another exception occurred:` and nothing more) is the crash another copy shows whole, through
    that same exception to the one it led to. Only a copy that names no place of its own, or one of that
    crash's; the nearest such crash."""
    if d.exception is None or not d.exception[0] or not d.fatal or not d.occurrences \
            or (d.complete and not d.announces):
        return None
    mine = None if _placeless(d) else (d.culprit.file, d.culprit.line) if d.culprit is not None else None
    fit = [e for e in hosts if e is not d and e.fatal and e.family == d.family and e.exception is not None
           and e.exception != d.exception and any(_same_exception_line(c, d.exception) for c in e.causes)
           and (mine is None or mine in {(f.file, f.line) for f in e.chain})]
    return _nearest(d, fit)


def _known_frames(diags: list[Diagnosis]) -> Callable[[Diagnosis], set[tuple[str, int]]]:
    """The frames a crash is known by: its own, and those of every copy whose frames pass through its
    culprit (a rank's copy that kept the outer end of the `from user code:` block that this one lost).
    Indexed once per merge (a scan of many files merges thousands of diagnoses), each answer cached."""
    through: dict[tuple[str, int, str], list[Diagnosis]] = {}
    for x in diags:
        for f in dict.fromkeys(x.chain):
            through.setdefault((f.file, f.line, f.function), []).append(x)
    cache: dict[int, set[tuple[str, int]]] = {}

    def known(e: Diagnosis) -> set[tuple[str, int]]:
        got = cache.get(id(e))
        if got is None:
            got = {(f.file, f.line) for f in e.chain}
            if e.culprit is not None:
                for x in through.get((e.culprit.file, e.culprit.line, e.culprit.function), ()):
                    if x.family == e.family:
                        got |= {(f.file, f.line) for f in x.chain}
            cache[id(e)] = got
        return got

    return known


def _subsequence(part: tuple[Frame, ...], chain: tuple[Frame, ...]) -> bool:
    it = iter((f.file, f.line) for f in chain)
    return all(k in it for k in ((f.file, f.line) for f in part))  # `in` consumes: order is kept


def _elided_host(d: Diagnosis, hosts: list[Diagnosis]) -> Diagnosis | None:
    """The fuller copy of a traceback that a paste's elision ("...") cut frames out of: the same finding,
    the same innermost frame, and its frames are the fuller copy's, in order, with a run of them missing.
    The fuller copy may have lost its exception line to another elision (a server's re-raise of str(e) cut
    inside its `from user code:` block, then the traceback cut before its exception line): its frames say
    it is the same crash."""
    if len(d.chain) < 2 or not d.fatal or not d.occurrences:
        return None
    fit: list[Diagnosis] = []
    for e in hosts:
        if e is d or not e.fatal or e.signature != d.signature or len(e.chain) <= len(d.chain) \
                or (e.chain[-1].file, e.chain[-1].line) != (d.chain[-1].file, d.chain[-1].line) \
                or (e.exception != d.exception and e.exception is not None and not (
                    d.exception and _same_exception_line(e.exception, d.exception))) \
                or not _subsequence(d.chain, e.chain):
            continue
        fit.append(e)
    return _nearest(d, fit)


def _wrapping_host(d: Diagnosis, hosts: list[Diagnosis]) -> Diagnosis | None:
    """The dynamo exception that wraps this one: dynamo quotes the error its fake-tensor run of the user's op
    raised (`TorchRuntimeError: ...: got RuntimeError('a and b must have same reduction dim ...')`), or a
    custom backend raised (`BackendCompilerFailed: backend=... raised:` / `AssertionError: ...`), and a paste
    may show that line apart. Only at the same place (its culprit is the dynamo crash's, or none)."""
    if d.exception is None or not d.exception[0] or _typed_dynamo(d) or not d.fatal or not d.occurrences:
        return None
    said = d.exception[1].strip()
    if len(said) < MIN_QUOTED:
        return None
    fit: list[Diagnosis] = []
    for e in hosts:
        # its first line, or what its signature read off the rest of its message (`raised:` then the
        # backend's own exception on the next line)
        if e is d or not e.fatal or e.exception is None or (
                said not in e.exception[1] and not any(said in v for _k, v in e.fields)):
            continue
        if d.culprit is not None and (e.culprit is None or (d.culprit.file, d.culprit.line) != (
                e.culprit.file, e.culprit.line)):
            continue
        fit.append(e)
    return _nearest(d, fit)


MAX_CHAIN_GAP = 20  # lines from a bare exception record to the next one of its chain (its message, the link line)


def _chained_host(d: Diagnosis, hosts: list[Diagnosis]) -> Diagnosis | None:
    """The exception a bare one was chained to: two frameless exception lines of the same finding, of two
    types (`torch.OutOfMemoryError` and the `RuntimeError` a server wrapped it in), a few lines apart on one
    rank, are one chain whose "direct cause" line the paste cut. The nearest one printed before it."""
    if d.chain or d.culprit is not None or not d.fatal or d.exception is None or not d.exception[0] \
            or not d.occurrences:
        return None
    src, line, rank = d.occurrences[0].source, d.occurrences[0].line, d.occurrences[0].rank
    best: tuple[int, Diagnosis] | None = None
    for e in hosts:
        if e is d or not e.fatal or e.chain or e.culprit is not None or e.signature != d.signature \
                or e.exception is None or not e.exception[0] or e.exception[0] == d.exception[0]:
            continue
        gaps = [line - o.line for o in e.occurrences
                if o.source == src and o.rank == rank and 0 < line - o.line <= MAX_CHAIN_GAP]
        if gaps and (best is None or min(gaps) < best[0]):
            best = (min(gaps), e)
    return best[1] if best else None


def _fold_reraises(diags: list[Diagnosis]) -> list[Diagnosis]:
    """One crash, one report: a re-raise that quotes a crash (a dynamo one first), an exception-less piece
    of a crash (its banner, frames or log line, cut from the rest), and the cause printed apart from the
    exception it led to, are occurrences of that crash."""
    # before any copy is asked whether it names a place; only within the log that showed it, and emptied
    # however the fold ends
    _OUTER_SEEN.update((o.source, *k) for d in diags for k in d.outer for o in d.occurrences)
    try:
        return _fold(diags)
    finally:
        _OUTER_SEEN.clear()


def _fold(diags: list[Diagnosis]) -> list[Diagnosis]:
    typed = [d for d in diags if _typed_dynamo(d)]
    # any other crash a server quotes (SGLang's `Piecewise CUDA Graph failed with error: <str(e)>` beside the
    # ImportError's own traceback): a typed exception with its frames
    raised = [d for d in diags if d.fatal and (d.chain or d.complete) and d.exception is not None and d.exception[0]
              and not _typed_dynamo(d)]
    shown = [d for d in diags if d.family == "dynamo" and d.evidence is None and d.exception is not None]
    # where no copy kept its exception line: the pieces that still say where dynamo failed
    placed = [d for d in diags if d.family == "dynamo" and d.fatal and d.exception is None and not _placeless(d)]
    if len(diags) < 2:
        return diags
    out = {id(d): d for d in diags}
    into: dict[int, int] = {}
    known, entry_call = _known_frames(diags), _entry_calls()
    for d in diags:
        # a copy of the same traceback first: its own fuller copy, before any other crash it could be part of
        h = _quoted_host(d, typed) or _quoted_host(d, raised) or _copy_host(d, diags) or _elided_host(d, diags) \
            or _quoting_host(d, typed) or _evidence_host(d, shown + placed if _placeless(d) else shown) \
            or _announced_host(d, typed) \
            or _caused_host(d, diags) or _same_exception_host(d, diags, known, entry_call) \
            or _cut_cause_host(d, diags) or _wrapping_host(d, typed) or _chained_host(d, diags) \
            or _introduced_host(d, typed + raised) or _piece_host(d, diags) or _deeper_piece_host(d, placed) \
            or _cut_finding_host(d, diags)
        if h is not None:
            into[id(d)] = id(h)

    def root(i: int) -> int:
        path = [i]
        while i in into:
            j = into[i]
            if j in path:  # a cycle (copies quoting each other): the one that names a culprit, then the
                # richest, then the first met keeps the report
                cycle = path[path.index(j):]
                keep = max(cycle, key=lambda k: (out[k].culprit is not None, _richness(out[k]), -cycle.index(k)))
                del into[keep]
                return keep
            i = j
            path.append(i)
        return i

    for d in diags:
        if id(d) in into:
            r = root(id(d))
            if r != id(d) and id(d) in into:
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
        by_id[d.id] = replace(best, occurrences=occ, context=ctx, fatal=cur.fatal or d.fatal,
                              outer=tuple(dict.fromkeys(cur.outer + d.outer)))
    out = _fold_reraises(_fold_fragments(_fold_location_only(by_id[i] for i in order)))
    first = {d.id: n for n, d in enumerate(out)}
    out.sort(key=lambda d: (not d.fatal, -d.confidence, first[d.id]))
    return out
