"""Crash records in, signature matches out: regex rules first, fuzzy nearest signature as a fallback."""

from __future__ import annotations

from . import recache
from ._struct import dataclass
from .catalog import Catalog, LibraryRule, Matcher, Signature, search
from .culprit import is_machinery, is_torch, pick_culprit, traced_chain
from .records import CrashRecord, Frame

FUZZY_THRESHOLD = 72.0


@dataclass(frozen=True, slots=True)
class Match:
    signature: Signature
    fields: dict[str, str]
    exact: bool
    score: float  # 100 for an exact match, the fuzzy score otherwise


@dataclass(frozen=True, slots=True)
class Targets:
    """The parts of a record that catalog patterns look at, computed once per record."""

    exception: tuple[str, ...]
    message: str
    gb: str
    callee: str
    frames: tuple[str, ...]
    culprit_source: str
    kind: str
    lead: str
    text: str
    dynamo: bool
    fatal: bool
    chain: tuple[Frame, ...]
    culprit: Frame | None
    headline: str = ""  # the headline exception's message (its first line), for the fuzzy matcher
    raised_in: str = ""  # "file:function" of the frame that raised the headline exception ("" if not shown)
    explanation: str = ""
    evidence: str = ""  # CrashRecord.evidence: what showed a dynamo failure whose exception is out of view
    dynamo_evidence: bool = False  # the record shows dynamo at work (see has_dynamo_evidence)
    # "file:function" of the innermost traced frame outside torch: the standard-library module (json.encoder,
    # <frozen os>, pathlib) whose call dynamo stopped at, when the user's line only shows the outer call
    innermost: str = ""
    hint: str = ""  # the `Hint:` lines of a 2.7+ dynamo message, one a line


def is_dynamo(record: CrashRecord) -> bool:
    return record.dynamo is not None or record.kind == "graph_break"


# An exception type or a message that only torch.compile's stack prints.
_DYNAMO_TYPE = recache.compile(r"^(?:torch\._|torch)(?:dynamo|inductor)\.|(?:^|\.)(?:BackendCompilerFailed|InductorError|Unsupported"
                               r"|TorchRuntimeError|InternalTorchDynamoError|FailOn\w+LimitHit|ConstraintViolationError)$")
_DYNAMO_TEXT = recache.compile(r"torch[._/]_dynamo|torch[._/]_inductor|torchdynamo\b|torchinductor\b|TorchDynamo|TORCHDYNAMO_|\bdynamo\b|Dynamo\b"
                               r"|torch\.compile\b|from user code:|WON'T CONVERT|FAILED INLINING|Recompiling function")


# torch's config modules: an AttributeError or KeyError raised there is a program reading a config option its
# torch does not have (a script written for a newer release), not a torch.compile failure. The message is
# config_utils' own wording, so it says so without its type too (a server quoting str(e): SGLang's
# `Piecewise CUDA Graph failed with error: torch._dynamo.config.x does not exist`).
_CONFIG_MISSING = recache.compile(r"(?:(?:AttributeError|KeyError): )?torch\._(?:dynamo|inductor)\.config\.\w+ does not exist")
_CONFIG_MODULE = recache.compile(r"torch[/\\](?:_dynamo[/\\]config_utils|utils[/\\]_config_module)\.py$")


# CrashRecord.evidence kinds that only torch.compile prints ("reraise", a server's "see root cause above"
# wrapper, says nothing of what failed).
_DYNAMO_EVIDENCE = frozenset({"compile-machinery", "banner", "failed-inlining", "recompiling", "torch-log", "compile-message",
                              "compiled-run"})


def has_dynamo_evidence(record: CrashRecord) -> bool:
    """A torch._dynamo or torch._inductor frame, a dynamo exception type, or a dynamo message: without
    one, a traceback is an eager crash (one that calls torch.cuda, say), not a torch.compile failure."""
    h = record.headline
    if h is not None and (h.frames and _CONFIG_MODULE.search(h.frames[-1].file)
                          or _CONFIG_MISSING.search(f"{h.type or ''}: {h.message or ''}")):
        # whatever else the record holds (a server's re-raise, a quoted copy): the program read a config
        # option its torch does not have
        return False
    if record.dynamo is not None or record.kind == "graph_break" or record.evidence in _DYNAMO_EVIDENCE:
        return True
    for b in record.chain:
        if b.type and _DYNAMO_TYPE.search(b.type):
            return True
        if any(is_machinery(f.file) for f in b.frames):
            return True
    text = "\n".join(x for x in (record.lead or "", *(b.message for b in record.chain)) if x)
    return bool(_DYNAMO_TEXT.search(text))


def is_fatal(record: CrashRecord) -> bool:
    return record.kind in ("traceback", "partial")


def targets(record: CrashRecord, cat: Catalog) -> Targets:
    parts: list[str] = []
    if record.lead:
        parts.append(record.lead)
    for b in record.chain:
        if b.type:
            parts.append(b.type + (": " + b.message if b.message else ""))
        elif b.message:
            parts.append(b.message)
    d = record.dynamo
    gb = ""
    if d is not None:
        if d.explanation:
            parts.append(d.explanation)
        if d.debug_context:
            parts.append(d.debug_context)
        gb = d.gb_id or ""
    message = "\n".join(parts)
    callee = ""
    for pat in cat.callee_patterns:
        m = search(pat, message)
        if m:
            callee = _callee_from(m.groupdict())
            if callee:
                break
    chain = traced_chain(record)
    culprit = pick_culprit(chain)
    if callee and "." not in callee and chain and chain[-1].source:
        # torch 2.1 names a C function by its bare name (`UserDefinedObjectVariable(crc32)`); the statement
        # dynamo stopped at shows its module (`zlib.crc32(...)`)
        callee = qualified_in(chain[-1].source, callee) or callee
    if not callee and d is not None and chain and chain[-1].source:
        # The message that names the rejected call was lost (a cut paste); the statement dynamo
        # stopped at still shows it.
        callee = call_in(chain[-1].source)
    frames = tuple(f"{f.file}:{f.function}" for f in chain) or tuple(
        f"{f.file}:{f.function}" for b in record.chain for f in b.frames
    )
    return Targets(
        exception=tuple(b.type for b in record.chain) or ("",),
        message=message,
        gb=gb,
        callee=callee,
        frames=frames,
        culprit_source=(culprit.source or "") if culprit else (chain[-1].source or "" if chain else ""),
        kind=record.kind,
        lead=record.lead or "",
        text="\n".join(record.text),
        dynamo=is_dynamo(record),
        fatal=is_fatal(record),
        chain=chain,
        culprit=culprit,
        headline=(record.headline.message.split("\n", 1)[0] if record.headline else ""),
        raised_in=(f"{record.headline.frames[-1].file}:{record.headline.frames[-1].function}"
                   if record.headline and record.headline.frames else ""),
        explanation=(d.explanation or "") if d is not None else "",
        evidence=record.evidence or "",
        dynamo_evidence=has_dynamo_evidence(record),
        innermost=next((f"{f.file}:{f.function}" for f in reversed(chain) if not is_torch(f.file)), ""),
        hint="\n".join(d.hints) if d is not None else "",
    )


_CALL = recache.compile(r"(?<![\w.])([A-Za-z_][\w]*(?:\.[A-Za-z_]\w*)*)\s*\(")


def call_in(source: str) -> str:
    """The call a source line makes (`self._lock = threading.Lock()` -> `threading.Lock`): the first
    dotted one, else the first one."""
    calls: list[str] = _CALL.findall(source.split("#", 1)[0])
    dotted = [c for c in calls if "." in c]
    return (dotted or calls or [""])[0]


def qualified_in(source: str, name: str) -> str:
    """The dotted call of `name` a source line makes (`zlib.crc32` for `crc32` in `h = zlib.crc32(b)`), if
    it makes one through a module or object name (never through `self`)."""
    for c in _CALL.findall(source.split("#", 1)[0]):
        if c.endswith("." + name) and not c.startswith(("self.", "cls.")):
            return c
    return ""


def _callee_from(g: dict[str, str | None]) -> str:
    if g.get("module") and g.get("qualname"):
        mod = g["module"] or ""
        q = g["qualname"] or ""
        return q if mod.startswith("<") else f"{mod}.{q}"
    if g.get("cls") and g.get("method"):
        return f"{g['cls']}.{g['method']}"
    for k in ("callee", "callee2"):
        v = g.get(k)
        if v:
            return v.strip().rstrip(".")
    return ""


def _field_values(t: Targets, key: str) -> tuple[str, ...]:
    if key == "exception":
        return t.exception
    if key == "frames":
        return t.frames
    if key in ("message", "not_message"):
        return (t.message,)
    if key == "culprit":
        return (f"{t.culprit.file}:{t.culprit.function}",) if t.culprit is not None else ()
    return (str(getattr(t, key)),)


def matcher_holds(m: Matcher, t: Targets) -> bool:
    if m.dynamo is not None and m.dynamo != t.dynamo:
        return False
    if m.fatal is not None and m.fatal != t.fatal:
        return False
    rules = [(key, pats, _field_values(t, key)) for key, pats in m.rules]
    # First the literal check of every required rule (no pattern compiled): a rule none of whose
    # patterns can match fails the matcher before any other rule's patterns are compiled and run.
    for key, pats, values in rules:
        if key != "not_message" and all(p.ruled_out(v) for p in pats for v in values):
            return False
    for key, pats, values in rules:
        hit = any(search(p, v) for p in pats for v in values)
        if key == "not_message":
            if hit:
                return False
        elif not hit:
            return False
    return not m.any or any(matcher_holds(alt, t) for alt in m.any)


def _extract(sig: Signature, t: Targets) -> dict[str, str]:
    fields: dict[str, str] = {}
    if t.callee:
        fields["callee"] = t.callee
    for pat in sig.extract:
        for v in (t.message, t.culprit_source, t.text):
            m = search(pat, v)
            if m:
                for k, val in m.groupdict().items():
                    if val and k not in fields:
                        fields[k] = val.strip()
                break
    return fields


def match_record(record: CrashRecord, cat: Catalog) -> tuple[Match | None, Targets]:
    t = targets(record, cat)
    fallbacks: list[Signature] = []
    for sig in cat.signatures:
        if "fallback" in sig.tags:
            fallbacks.append(sig)
            continue
        if sig.family == "dynamo" and not t.dynamo_evidence and not _own_evidence(sig, t):
            continue  # every dynamo signature needs dynamo's own evidence in the record
        if matcher_holds(sig.matcher, t):
            return Match(sig, _extract(sig, t), True, 100.0), t
    # The nearest signature by wording stands in for one whose wording drifted between releases (2.1-2.6's
    # free-form one-liners). A 2.7+ structured message names its graph break type (gb_type, a registry
    # entry): one no rule matched is a break no family covers, and the nearest wording is another family's.
    structured = record.dynamo is not None and bool(record.dynamo.gb_type)
    near = None if structured else fuzzy_nearest(
        t, [s for s in cat.signatures if "fallback" not in s.tags and s.family == "dynamo"])
    if near is not None and t.dynamo:
        sig, score = near
        return Match(sig, _extract(sig, t), False, score), t
    for sig in fallbacks:
        if sig.family == "dynamo" and not t.dynamo_evidence:
            continue
        if matcher_holds(sig.matcher, t):
            return Match(sig, _extract(sig, t), True, 100.0), t
    return None, t


def _own_evidence(sig: Signature, t: Targets) -> bool:
    """The signature's `compile_evidence`: a message only torch.compile's stack prints."""
    return any(search(p, t.message) for p in sig.compile_evidence)


def fuzzy_nearest(t: Targets, sigs: list[Signature]) -> tuple[Signature, float] | None:
    """The closest signature by message and callee, when wording drifted between torch versions."""
    query = " ".join(x for x in (t.headline[:300], t.explanation[:300], t.callee) if x)
    if not query.strip() or not sigs:
        return None
    from rapidfuzz import fuzz, process, utils

    choices = {s.id: s.fuzzy_text for s in sigs}
    best = process.extractOne(query, choices, scorer=fuzz.token_set_ratio, processor=utils.default_process)
    if best is None:
        return None
    _text, score, sig_id = best
    if score < FUZZY_THRESHOLD:
        return None
    return next(s for s in sigs if s.id == sig_id), float(score)


def library_rules(t: Targets, sig: Signature | None, cat: Catalog) -> list[LibraryRule]:
    out = []
    for rule in cat.libraries:
        if rule.signatures and (sig is None or sig.id not in rule.signatures):
            continue
        if matcher_holds(rule.matcher, t):
            out.append(rule)
    return out
