"""What the log says about its environment: facts from start-up lines, and each crash's compile context."""

from __future__ import annotations

from ._struct import dataclass, field
from .catalog import Catalog, ServerFlag, covering_literals_of, search
from .match import Targets
from .records import Context, CrashRecord, LogLine


@dataclass(slots=True)
class Facts:
    """Facts seen so far in one source (server, versions, server arguments), first value wins."""

    values: dict[str, str] = field(default_factory=dict)
    where: dict[str, tuple[str, int]] = field(default_factory=dict)
    from_prefix: set[str] = field(default_factory=set)  # keys learnt from a line's prefix, not its text
    # lines where a `mark` fact matched, by mark name: (source, line), at most MAX_MARKS of each
    marks: dict[str, list[tuple[str, int]]] = field(default_factory=dict)

    MAX_MARKS = 1000

    def mark(self, name: str, source: str, lineno: int) -> None:
        at = self.marks.setdefault(name, [])
        if len(at) < self.MAX_MARKS:
            at.append((source, lineno))

    # the last line of the log record each mark's line starts (lines of one glog record share its level)
    mark_ends: dict[tuple[str, int], int] = field(default_factory=dict)

    def in_marked_record(self, name: str, source: str, lineno: int, within: int = 3) -> bool:
        """`lineno` of `source` belongs to the log record a `name` mark starts: up to its last line with the
        same level prefix, and at least the `within` lines after it (a record printed without prefixes)."""
        for s, ln in self.marks.get(name, ()):
            if s == source and ln < lineno <= max(ln + within, self.mark_ends.get((s, ln), 0)):
                return True
        return False

    def set(self, key: str, value: str, source: str, lineno: int) -> None:
        if key not in self.values:
            self.values[key] = value
            self.where[key] = (source, lineno)

    def lines(self) -> list[str]:
        return [f"{k}={v}" for k, v in self.values.items()]

    def known(self) -> int:
        """How many facts are known; facts are only added, so equal counts mean equal facts."""
        return len(self.values) + len(self.from_prefix) + sum(len(v) for v in self.marks.values())


class FactCollector:
    """Fed every framed line; cheap substring triggers keep it off the hot path.

    A line that holds a trigger is only noted; the catalog patterns run when the facts are first
    read (a diagnosis needs them), in line order, so a log without a crash never compiles them (nor
    imports the `regex` module). The result is the same as running them line by line."""

    MAX_NOTED = 4096  # noted lines are worked through once this many wait,
    MAX_NOTED_CHARS = 1 << 20  # or once they hold this much text (a line may be 64 KiB long)

    def __init__(self, cat: Catalog) -> None:
        self.cat = cat
        self._facts = Facts()
        self._triggers = [(r.trigger, r) for r in cat.facts]
        # Every match of a rule's pattern holds one of its covering literals (literals.py): a line with
        # the trigger but none of them is not searched (`torch` is in every line of a torch traceback,
        # `torch==2.` in none of them; the search cost 0.2 ms a line).
        self._covers: dict[int, tuple[str, ...]] | None = None  # when first worked through
        self._noted: list[tuple[str, int, str | None]] = []  # (source, line, text); None: an SGLang prefix
        self._noted_chars = 0
        self._prefix_noted = False
        self._mark_triggers = {r.trigger for r in cat.facts if r.mark}
        self._span: tuple[str, int, str] | None = None  # (source, line, level) of an open marked record

    @property
    def pending(self) -> bool:
        """Lines that hold a trigger were noted and not worked through yet (reading `facts` does it)."""
        return bool(self._noted)

    @property
    def facts(self) -> Facts:
        if self._noted:
            self._work_through()
        return self._facts

    def feed(self, line: LogLine) -> None:
        if line.record_start and line.rank and not self._prefix_noted:
            # Only SGLang prints a `[date time TPn]` prefix once per record; the first such line
            # is the only one that can set the fact.
            self._prefix_noted = True
            self._noted.append((line.source, line.lineno, None))
        text = line.text
        span = self._span
        if span is not None:
            if line.level == span[2] and line.prefixed and line.source == span[0]:
                self._facts.mark_ends[(span[0], span[1])] = line.lineno
            else:
                self._span = None
        for trig, rule in self._triggers:
            if trig in text:
                self._noted.append((line.source, line.lineno, text))
                self._noted_chars += len(text)
                if self._mark_triggers and trig in self._mark_triggers and line.level and line.prefixed:
                    self._span = (line.source, line.lineno, line.level)
                break
        if len(self._noted) >= self.MAX_NOTED or self._noted_chars >= self.MAX_NOTED_CHARS:
            self._work_through()

    def _work_through(self) -> None:
        noted, self._noted, self._noted_chars = self._noted, [], 0
        facts = self._facts
        if self._covers is None:
            self._covers = {id(r): covering_literals_of(r.pattern.source) for _, r in self._triggers}
        for source, lineno, text in noted:
            if text is None:
                if "server" not in facts.values:
                    facts.set("server", "sglang", source, lineno)
                    facts.from_prefix.add("server")
                continue
            for trig, rule in self._triggers:
                if trig in text:
                    cover = self._covers[id(rule)]
                    if cover and not any(c in text for c in cover):
                        continue
                    m = search(rule.pattern, text)
                    if not m:
                        continue
                    groups = m.groupdict()
                    if rule.mark:
                        facts.mark(rule.mark, source, lineno)
                    for key, val in rule.sets:
                        value = val
                        if val.startswith("$"):
                            value = groups.get(val[1:]) or ""
                        if value:
                            facts.set(key, value, source, lineno)


def parse_version(v: str) -> tuple[int, ...] | None:
    nums = []
    for part in v.replace("-", ".").split("."):
        digits = ""
        for ch in part:
            if ch.isdigit():
                digits += ch
            else:
                break
        if digits == "":
            break
        nums.append(int(digits))
        if digits != part:
            break
    return tuple(nums) if nums else None


def infer_context(record: CrashRecord, t: Targets, facts: Facts, cat: Catalog) -> Context:
    values: dict[str, object] = {}
    evidence: list[str] = []
    all_frames = tuple(f"{f.file}:{f.function}" for b in record.chain for f in b.frames) + t.frames
    text = "\n".join(x for x in (record.lead or "", t.message, "\n".join(record.text)) if x)
    fact_lines = facts.lines()
    for rule in sorted(cat.context_rules, key=lambda r: r.priority):
        pool = {"frames": all_frames, "text": (text,), "facts": fact_lines, "rank": (record.rank or "",)}[rule.where]
        if any(search(p, v) for p in rule.patterns for v in pool):
            for k, v in rule.sets:
                values[k] = v
            if rule.evidence:
                evidence.append(rule.evidence)
    fullgraph = values.get("fullgraph")
    if fullgraph is None:
        if record.kind == "graph_break":
            fullgraph = False
            evidence.append("the log shows a non-fatal graph break, so this region may break the graph")
        elif record.kind in ("traceback", "partial") and any(x.endswith("Unsupported") for x in t.exception):
            fullgraph = True
            evidence.append(
                "dynamo raised Unsupported instead of breaking the graph: the region is compiled with "
                "fullgraph=True (or error_on_graph_break)"
            )
    versions = tuple(sorted((k[len("version."):], v) for k, v in facts.values.items() if k.startswith("version.")))
    for key, val in facts.values.items():
        if key.startswith("version.") and f"version {key}" not in evidence:
            src, ln = facts.where[key]
            evidence.append(f"{key[len('version.'):]} {val} (from {src}:{ln})")
    server = values.get("server") or facts.values.get("server")
    return Context(
        fullgraph=bool(fullgraph) if isinstance(fullgraph, bool) else None,
        server=str(server) if server else None,
        mode=str(values["mode"]) if values.get("mode") else None,
        versions=versions,
        evidence=tuple(dict.fromkeys(evidence)),
    )


def compile_off_flag(ctx: Context, cat: Catalog) -> str | None:
    """How to turn the compiled path off, spelled for this server version."""
    if not ctx.server or not ctx.mode:
        return None
    version = parse_version(dict(ctx.versions).get(ctx.server, "")) if ctx.versions else None
    candidates: list[ServerFlag] = [f for f in cat.server_flags if f.server == ctx.server and f.mode == ctx.mode]
    if version is not None:
        for f in candidates:
            if f.min_version is None and f.max_version is None:
                continue
            lo_ok = f.min_version is None or version >= f.min_version
            hi_ok = f.max_version is None or version[: len(f.max_version)] <= f.max_version
            if lo_ok and hi_ok:
                return f.text
    for f in candidates:
        if f.min_version is None and f.max_version is None:
            return f.text
    return None
