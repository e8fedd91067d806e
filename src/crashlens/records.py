"""Plain records that flow between the pipeline stages (lines, crash records, diagnoses)."""

from __future__ import annotations

import re

from ._struct import dataclass, field

TYPE_CHECKING = False  # typing.TYPE_CHECKING without importing typing (~4 ms of start-up)
if TYPE_CHECKING:
    from typing import Any


@dataclass(frozen=True, slots=True)
class LogLine:
    """One logical log line after framing: prefix removed, ANSI stripped."""

    source: str
    lineno: int  # 1-based position in the source
    text: str
    rank: str | None = None  # "TP3", "Worker_TP1", "rank4", ... None when the line carried no rank
    prefixed: bool = False  # the line started a log record (server/glog prefix seen)
    level: str | None = None  # ERROR/WARNING/... when the prefix said so
    artifact: str | None = None  # torch logging artifact, e.g. "graph_breaks"
    record_start: bool = False  # the prefix is printed once per record (SGLang), so this line starts one
    logger: str | None = None  # the logger a Python-logging prefix names (`ERROR:torch._dynamo.x:`)
    logged_at: str | None = None  # the file a glog prefix names (`W1201 ... torch/_dynamo/convert_frame.py:1280]`)
    # characters of the physical line it was (controls stripped, prefixes kept): a terminal's hard wrap cuts
    # lines at one width (traceback.Rewrap); 0 for a piece of a physical line that held several
    width: int = 0


@dataclass(frozen=True, slots=True)
class Frame:
    file: str
    line: int
    function: str
    source: str | None = None

    def to_json(self) -> dict[str, Any]:
        return {"file": self.file, "line": self.line, "function": self.function}

    def where(self) -> str:
        return f"{self.file}:{self.line} in {self.function}"


@dataclass(frozen=True, slots=True)
class ExceptionBlock:
    """One exception of a (possibly chained) traceback, as printed."""

    type: str  # "torch._dynamo.exc.Unsupported"; "" when only the message survived
    message: str  # the whole message (first line plus continuation), without dynamo sections
    frames: tuple[Frame, ...] = ()  # traceback frames, outermost first
    cause_link: str | None = None  # "cause" / "context": how the NEXT block relates to this one


@dataclass(frozen=True, slots=True)
class DynamoReport:
    """The dynamo-specific parts of a failure report, whatever era printed them."""

    gb_type: str | None = None
    explanation: str | None = None
    hints: tuple[str, ...] = ()
    debug_context: str | None = None
    gb_id: str | None = None  # "GB0007"
    user_frames: tuple[Frame, ...] = ()  # "from user code:" / "User code traceback:", outermost first
    trailer: bool = False  # the "Set TORCHDYNAMO_VERBOSE=1 ..." / "You can suppress ..." lines were seen


@dataclass(frozen=True, slots=True)
class CrashRecord:
    """A crash (or graph break / warning) found in the log, before any library knowledge is applied."""

    kind: str  # "traceback" | "graph_break" | "warning" | "partial"
    source: str
    start_line: int
    end_line: int
    rank: str | None
    chain: tuple[ExceptionBlock, ...] = ()  # printed order; the last one is the headline
    dynamo: DynamoReport | None = None
    lead: str | None = None  # text on the record-start line before the exception (e.g. "Scheduler hit an exception")
    complete: bool = True  # False when the log ended (or was cut) in the middle of the record
    text: tuple[str, ...] = ()  # the record's lines (bounded), for signature matching and fuzzy fallback
    # What showed it is dynamo's when no exception line did (evidence.py): "compile-machinery" (frames
    # only torch.compile runs), "banner", "failed-inlining", "recompiling", "torch-log"; None otherwise.
    evidence: str | None = None

    @property
    def headline(self) -> ExceptionBlock | None:
        """The exception a person should read first: the last dynamo exception of the chain (a later
        error raised while handling it, e.g. in torch's metrics logging, is secondary), else the last."""
        for block in reversed(self.chain):
            if block.type.startswith(("torch._dynamo.exc.", "torch._inductor.exc.", "torchdynamo.exc.", "torchinductor.exc.")):
                return block
        return self.chain[-1] if self.chain else None


@dataclass(frozen=True, slots=True)
class ContextFact:
    """Something the log says about the environment: server, versions, server arguments."""

    key: str  # "server", "version.sglang", "arg.enable_torch_compile", ...
    value: str
    source: str
    lineno: int


@dataclass(frozen=True, slots=True)
class Occurrence:
    source: str
    line: int
    rank: str | None
    round: int = 1  # which launch of the server, in a log appended to over several (rounds.py)

    def to_json(self) -> dict[str, Any]:
        return {"source": self.source, "line": self.line, "rank": self.rank, "round": self.round}


@dataclass(frozen=True, slots=True)
class Fix:
    rank: int
    kind: str  # custom-op, decorate, precompute, config, flag, upgrade, workaround, report
    title: str
    detail: str
    file: str | None = None
    line: int | None = None
    safety: str = ""
    source: str = ""  # signature or library rule that contributed it
    compile_off: bool = False  # turns compilation off: a diagnostic step, never a fix (not in the JSON)

    def to_json(self) -> dict[str, Any]:
        return {
            "rank": self.rank,
            "kind": self.kind,
            "title": self.title,
            "detail": self.detail,
            "file": self.file,
            "line": self.line,
            "safety": self.safety,
        }


@dataclass(frozen=True, slots=True)
class Context:
    fullgraph: bool | None = None
    server: str | None = None  # "sglang" | "vllm" | None
    mode: str | None = None  # "sglang-pcg", "sglang-torch-compile", "vllm-compile", "torch.compile", ...
    versions: tuple[tuple[str, str], ...] = ()
    evidence: tuple[str, ...] = ()  # why we believe the above, for a person

    def to_json(self) -> dict[str, Any]:
        return {
            "fullgraph": self.fullgraph,
            "server": self.server,
            "mode": self.mode,
            "versions": dict(self.versions),
            "evidence": list(self.evidence),
        }


@dataclass(frozen=True, slots=True)
class Diagnosis:
    id: str
    family: str
    signature: str | None
    title: str
    summary: str
    confidence: float
    fatal: bool
    exception: tuple[str, str] | None  # (type, message)
    culprit: Frame | None
    callee: str | None
    chain: tuple[Frame, ...]
    context: Context
    occurrences: tuple[Occurrence, ...]
    fixes: tuple[Fix, ...]
    why: str = ""
    near_match: float | None = None  # fuzzy score when the signature was a near match
    gb_id: str | None = None
    next: tuple[dict[str, Any], ...] = ()  # blockers further down the same chain
    warnings: tuple[str, ...] = ()  # "next failure waiting" notes from the catalog
    fields: tuple[tuple[str, str], ...] = field(default=())
    complete: bool = True  # False when the record was cut off (end of log, or a lost piece)
    evidence: str | None = None  # CrashRecord.evidence: the failure's exception line was out of view
    # the record ended on "The above exception was the direct cause of the following exception:" (or
    # "During handling ..."), the exception it announced printed apart from it (another logger's prefix)
    announces: bool = False
    # an exception-less cut piece whose culprit is only the innermost frame of a traceback cut before its
    # exception (the script's `<module>` line, a server's own frames): where the log was cut, not where
    # dynamo failed
    unplaced: bool = False
    # the other exceptions of its chain, (type, first line), printed order: the causes a copy cut before the
    # chain's end shows as its last exception (a rank's copy cut after `The above exception was the direct
    # cause of the following exception:`)
    causes: tuple[tuple[str, str], ...] = ()
    # (file, line) of the frames its traceback shows before torch.compile's entry (eval_frame): the program's
    # own path into the compiled function, never where dynamo stopped
    outer: tuple[tuple[str, int], ...] = ()

    @property
    def ranks(self) -> list[str]:
        """Ranks that printed this crash, in natural order (TP2 before TP10)."""
        seen = {occ.rank for occ in self.occurrences if occ.rank}
        return sorted(seen, key=_natural)


def _natural(s: str) -> list[Any]:
    return [int(p) if p.isdigit() else p for p in re.split(r"(\d+)", s)]
