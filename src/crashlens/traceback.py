"""LogLines in, CrashRecords out: one small state machine per rank stream, plus a router for unprefixed lines."""

from __future__ import annotations

import re
from collections.abc import Iterator

from . import recache
from ._struct import dataclass, field
from .evidence import (
    BANNER as _TRAILER,
    CXX_FATAL,
    EXC_FREE,
    EXC_LEADING,
    FRAME,
    FRAME_CUT,
    TB_START_CUT,
    GB_HEADER,
    GUARD_ERROR,
    GUARD_FAILURE,
    IPY_FRAME,
    IPY_OLD_FRAME,
    IPY_SOURCE,
    PCG_FAILED,
    PYTEST_FRAME,
    RECOMPILE,
    RECORD_START_MARKERS,
    RULES,
    TB_START,
    USER_CODE,
    WONT_CONVERT,
    candidates,
    exception_match,
    first_evidence,
    is_compile_machinery,
    is_compiled_code,
    is_compiled_run,
    may_be_evidence,
    points_elsewhere,
)
from .culprit import is_torch
from .frame import frame_line
from .records import CrashRecord, DynamoReport, ExceptionBlock, Frame, LogLine

# The fast path (prefilter.py) skips lines that hold none of these while no record is open: every rule
# of evidence.RULES brings its own markers.
__all__ = ["RECORD_START_MARKERS", "RecordExtractor", "extract_records"]
MAX_RECORD_LINES = 600  # text kept per record (head and tail), so a runaway record stays bounded
MAX_FRAMES = 400
MAX_CHAIN = 32
MAX_TRACKED_LINES = 5000

_FRAME_NOFUNC = recache.compile(r'^\s*File "(?P<file>[^"]+)", line (?P<line>\d+)\s*$')
_COLLAPSED_FRAMES = recache.compile(r"^\d+ frames$")  # Colab folds library frames into one such line
_CARET = recache.compile(r"^\s*[\^~]+\s*$")
_CAUSE = "The above exception was the direct cause of the following exception:"
_CONTEXT = "During handling of the above exception, another exception occurred:"
# An exception line inside a traceback: `pkg.mod.Type: message` or a bare `Type`.
_EXC_IN_TB = recache.compile(r"^(?P<type>[A-Za-z_][\w]*(?:\.[A-Za-z_][\w]*)*)(?::(?: (?P<msg>.*))?)?\s*$")
# The exception line of a traceback pasted indented as a whole (under a source line indented deeper):
# only a name that says it is an exception type, so that a multi-line source line is never one.
_INDENTED_EXC = recache.compile(
    r"^(?P<type>(?:[a-z_]\w*\.)*_?[A-Z]\w*(?:Error|Exception|Unsupported|BackendCompilerFailed))(?::(?: (?P<msg>.*))?)?$")
_DYNAMO_TYPE = recache.compile(
    r"(?:^|\.)(?:Unsupported|UserError|TorchRuntimeError|InternalTorchDynamoError|BackendCompilerFailed|"
    r"InductorError|UncapturedHigherOrderOpError|Observed\w*|RestartAnalysis|SkipFrame|"
    r"GuardOnDataDependentSymNode|DataDependentOutputException|UnsupportedOperatorException|"
    r"FailOnRecompileLimitHit|FailOnCacheLimitHit|RecompileLimitExceeded|CacheLimitExceeded|ConstraintViolationError)$"
)
_EXPLANATION = recache.compile(r"^\s*Explanation: ?(?P<t>.*)$")  # indented; at column 0 in a paste that lost it
_HINT = recache.compile(r"^\s*Hint: ?(?P<t>.*)$")  # indented; at column 0 in a paste that lost it
_DEBUG_CTX = recache.compile(r"^\s*Developer debug context: ?(?P<t>.*)$")  # indented; at column 0 in a paste that lost it
_GB_LINK = recache.compile(r"For more details about this graph break, please visit: (?P<url>\S+)")
_GB_ID = recache.compile(r"[Gg][Bb](\d{4})")
_ELISION = recache.compile(r"^\s*(?:\.\.\.|…)\s*$|^\s*\[\.\.\.[^\]]*\]\s*$")
# a UserError's stack (`User Stack (most recent call last):`), and the user frame that specialised a dynamic
# dimension under a ConstraintViolationError (`User stack:`, torch 2.9+)
# output_graph's warning when the backend raised a fake-tensor exception (2.1-2.5): the message, the user
# stack dynamo was tracing (root_tx.format_frame_summary()), then its last line; the graph breaks there.
# What may stand before a quoted compile-only message (evidence.py's compile-message): an exception or warning type
# and its colon (`UserWarning: `, `Request failed: Error: `); anything else (`ing: `, a line a terminal wrapped
# inside `UserWarning`) is the rest of another line.
_QUOTED_AFTER = recache.compile(r"(?:\b[A-Z]\w*(?:Error|Exception|Warning|Unsupported)|\bError|\bWarning): ?`?$")
_RAISED_HEAD = recache.compile(r"(?:Error|Exception|Unsupported): ?`?$")
_FAKE_FALLBACK_AT = recache.compile(r"^Backend compiler failed with a fake tensor exception at\s*$")
_FAKE_FALLBACK_END = "Adding a graph break."
# A compiler's or linker's stderr (the build inductor or triton ran in a subprocess) printed into the middle
# of a traceback: gcc / ld / collect2 diagnostics, `file.c:4:10: fatal error: ...`, `compilation terminated.`
_TOOLCHAIN_OUTPUT = recache.compile(
    r"^(?:(?:\S*/)?(?:ld(?:\.\w+)?|collect2|gcc|g\+\+|cc|c\+\+|clang|clang\+\+|nvcc)(?:-[\d.]+)?: "
    r"|\S+\.(?:c|cc|cpp|cxx|h|hpp|cu|cuh):\d+(?::\d+)?: (?:fatal error|error|warning|note): "
    r"|nvcc (?:fatal|error|warning)\s*: "
    # MSVC (triton-windows and inductor on Windows): `C:\t\main.c(123): error C2059: ...`, `LINK : fatal error LNK1181: ...`
    r"|\S.*?\.(?:c|cc|cpp|cxx|h|hpp)\(\d+\): (?:fatal )?(?:error|warning) C\d+: |LINK : fatal error LNK\d+: "
    r"|compilation terminated\.$)"
)
_RULE_LINE = recache.compile(r"^-{4,}$")
_REPR_ESCAPE = recache.compile(r"\\(.)")
# words only dynamo's messages hold: a repr of a type named like one of dynamo's is dynamo's when its text says so
_DYNAMO_OWN_TYPES = ("TorchRuntimeError", "InternalTorchDynamoError", "BackendCompilerFailed", "InductorError")
_DYNAMO_REPR_TEXT = recache.compile(r"Explanation: |TORCHDYNAMO_VERBOSE|TORCH_LOGS=|torch\._dynamo|from user code:")
_USER_STACK = recache.compile(r"^User [Ss]tack(?: \(most recent call last\))?:\s*$")
# Lines that look like a new log record rather than more of an exception message.
_LOGLIKE = recache.compile(
    r"^(?:\[?\d{4}[-/]\d\d[-/]\d\d[ T]|[IWEVD]\d{4} \d\d:|\d\d:\d\d:\d\d|(?:INFO|WARNING|WARN|ERROR|DEBUG|CRITICAL)\b"
    r"|\S+\.py:\d+: \w*Warning:)"
)
MAX_MESSAGE_PARAGRAPH_LINES = 60
_TRAILER_TAIL = recache.compile(r"^\s+(?:import torch\._dynamo|torch\._dynamo\.config\.suppress_errors = True)\s*$")
_BODY_MARKERS = recache.compile(
    r"^(?:\s*what\(\):|Exception raised from |\s*Higher Order Operator:|\*\*\* While handling this graph break|Minifier script written to"
    r"|Last frame execution written to|To execute this test, run the following command|- Root cause:)"
)
_PCG_HINT = recache.compile(
    r"^(?:Piecewise CUDA Graph is enabled by default|To work around this error, add|"
    r"Please report this issue at https://github\.com/sgl-project)"
)
_GB_REASON = recache.compile(r"^(?:Graph Break Reason|Reason): (?P<msg>.*)$")
_GB_ENCOUNTERED = recache.compile(r"^Encountered graph break when attempting to trace \w+: .*:\s*$")
# explain()'s report: `1. generic_jump TensorVariable()` (2.0) or `Break Reason 1:` then `Reason: ...`
# (2.1+), each reason's stack as frames (2.0) or `<FrameSummary file F, line N in FN>` (2.1+), and the
# report's other lines (counts, `Ops per Graph:`, the ops, guards).
_EXPLAIN_REASON = recache.compile(r"^(?:\d+\.\s+(?P<msg>\S.*)|Reason:\s*(?P<msg2>\S.*))$")
_FRAME_SUMMARY = recache.compile(r"^<FrameSummary file (?P<file>.+?), line (?P<line>\d+) in (?P<func>[^>]+)>$")
_EXPLAIN_LINE = recache.compile(r"^(?:Break [Rr]easons?(?: \d+)?:|Graph Count:|Op Count:|Ops per Graph:|Out Guards:|"
                                r"Compile Times:|User Stack:|Graph Break Count:)")
# explain()'s sections after the break reasons
_EXPLAIN_TAIL = recache.compile(r"^(?:Ops per Graph:|Out Guards:|Compile Times:)")
_CALL_NAME = recache.compile(r"(?<![\w.])([A-Za-z_]\w*(?:\.[A-Za-z_]\w*)*)\s*\(")
_GB_USER_TB = recache.compile(r"^(?:User code traceback:|The graph break occurred in the following user code:)\s*$")
# what only the recompile-limit warning prints under its `function:` line: 2.1+ `last reason:` and its
# TORCH_LOGS hint; 2.0's `reasons:` and `to diagnose recompilation issues, see <troubleshooting url>.`
_RECOMPILE_BODY_TAIL = ("last reason: ", 'To log all recompilation reasons, use TORCH_LOGS="recompiles"', "reasons: ",
                        "to diagnose recompilation issues, see ")
_RECOMPILE_FN = recache.compile(r"^\s*function: '(?P<func>[^']*)' \((?P<file>.+?):(?P<line>\d+)\)")


@dataclass(slots=True)
class _Block:
    type: str = ""
    message_lines: list[str] = field(default_factory=list)
    frames: list[Frame] = field(default_factory=list)
    cause_link: str | None = None


@dataclass(slots=True)
class _Draft:
    kind: str
    source: str
    start_line: int
    rank: str | None
    lead: str | None = None
    blocks: list[_Block] = field(default_factory=list)
    gb_type: str | None = None
    explanation: list[str] = field(default_factory=list)
    hints: list[str] = field(default_factory=list)
    debug_context: list[str] = field(default_factory=list)
    gb_id: str | None = None
    user_frames: list[Frame] = field(default_factory=list)
    trailer: bool = False
    end_line: int = 0
    head: list[str] = field(default_factory=list)
    tail: list[str] = field(default_factory=list)
    dropped: int = 0
    dynamo_body: bool = False  # dynamo-only text (sections, `from user code:`) was seen
    structured: bool = False  # 2.7+ Explanation/Hint/Developer debug context sections were seen
    gb_artifact: bool = False  # lines came from the graph_breaks logger
    repr_close: str = ""  # an exception's repr split at its `\n`: the quote and parenthesis that end it
    logged_stack: bool = False  # frames in INFO/DEBUG records: a logged stack (`stack_info`), not a crash's
    saw_user_code: bool = False
    gb_header_only: bool = False  # the only frame is the graph-break header's location
    evidence: str | None = None  # the evidence kind that opened it, when not an exception line (evidence.py)
    ipython: bool = False  # IPython's traceback format (numbered source lines)
    source_indent: int = 0  # the indentation of the last frame's source line
    # the type IPython's header names (`InternalTorchDynamoError    Traceback (most recent call last)`): the
    # exception's, when a paste is cut before its exception line
    header_type: str | None = None
    pytest: bool = False  # pytest's short traceback format (`PATH:LINE: in FUNC` frames)
    hashes: list[int] = field(default_factory=list)  # every line's hash, to align ranks printing the same record
    # explain()'s previous break reason, held until this reason's first frame shows whether that one was
    # only its caller (torch 2.0 reports a break inside an inlined call once per enclosing frame)
    outer: _Draft | None = None

    def keep(self, line: LogLine) -> None:
        self.end_line = line.lineno
        if len(self.hashes) < MAX_TRACKED_LINES:
            self.hashes.append(hash(line.text))
        half = MAX_RECORD_LINES // 2
        if len(self.head) < half:
            self.head.append(line.text)
        else:
            self.tail.append(line.text)
            if len(self.tail) > half:
                self.tail.pop(0)
                self.dropped += 1

    def block(self) -> _Block:
        if not self.blocks:
            self.blocks.append(_Block())
        return self.blocks[-1]

    def new_block(self, link: str | None = None) -> _Block:
        if self.blocks and link:
            self.blocks[-1].cause_link = link
        if len(self.blocks) >= MAX_CHAIN:
            self.blocks.pop(0)
        self.blocks.append(_Block())
        return self.blocks[-1]

    def finish(self, complete: bool) -> CrashRecord:
        if self.header_type and not any(b.type for b in self.blocks) and \
                not any(is_compile_machinery(f) for b in self.blocks for f in b.frames):
            # the header's type stands for the exception line out of view, unless compile-machinery frames
            # already say more (a compile failure whose message is lost)
            self.block().type = self.header_type
        chain = tuple(
            ExceptionBlock(
                b.type,
                "\n".join(b.message_lines).strip(),
                tuple(b.frames),
                b.cause_link,
            )
            for b in self.blocks
            if b.type or b.message_lines or b.frames
        )
        chain = _unquote(chain)
        typed = any(b.type for b in chain)
        evidence = None if typed else self.evidence
        if typed and chain and points_elsewhere(chain[-1].message):
            evidence = "reraise"  # "... See root cause above.": a server's wrapper of a crash printed before
        machinery = any(is_compile_machinery(f) for b in chain for f in b.frames) or \
            not typed and not self.logged_stack and any(is_compiled_code(f) for b in chain for f in b.frames)
        if machinery and not typed:
            evidence = "compile-machinery"  # torch.compile's own frames, its exception line out of view
        elif not typed and not self.logged_stack and evidence is None and \
                any(is_compiled_run(b.frames) for b in chain):
            evidence = "compiled-run"  # a compiled graph's run failed, its exception line out of view
        dynamo = None
        if self.dynamo_body or self.user_frames or self.trailer or machinery or \
                any(_DYNAMO_TYPE.search(b.type) for b in chain):
            dynamo = DynamoReport(
                gb_type=self.gb_type,
                explanation=" ".join(self.explanation).strip() or None,
                hints=tuple(self.hints),
                debug_context=" ".join(self.debug_context).strip() or None,
                gb_id=self.gb_id,
                user_frames=tuple(self.user_frames) or _caused_by(chain),
                trailer=self.trailer,
            )
        text = tuple(self.head + ([f"[... {self.dropped} lines ...]"] if self.dropped else []) + self.tail)
        return CrashRecord(
            kind=self.kind,
            source=self.source,
            start_line=self.start_line,
            end_line=self.end_line or self.start_line,
            rank=self.rank,
            chain=chain,
            dynamo=dynamo,
            lead=self.lead,
            complete=complete,
            text=text,
            evidence=evidence,
        )


# States of one stream.
IDLE = "idle"
TB = "traceback"  # reading `File ...` frames of a traceback
BODY = "body"  # after an exception line: message continuation and dynamo sections
USER = "user"  # reading `from user code:` frames
AFTER = "after"  # after a blank line or the trailer: the record may continue (chain) or end
GB = "graph_break"  # a non-fatal graph-break log entry
WARN = "warning"  # recompile limit / guard error style multi-line log entries
SKIP = "skip"  # the call stack printed inside a warning ("This call originates from:"): not a crash
INLINE = "inlining"  # `FAILED INLINING <code object ...>` lines, one per inlined call the error left
EXPLAIN_REPORT = "explain"  # torch._dynamo.explain()'s report: its break reasons, each with its user stack
WARNING_SOURCE = "warning-source"  # a section: the next line is the source line a Python warning shows
MAX_INLINE_GAP = 40  # other debug lines between two FAILED INLINING lines of one failure


class _Stream:
    """Parses the lines of one rank into records."""

    __slots__ = (
        "blank_run",
        "draft",
        "fed_at",
        "last_kind",
        "name",
        "nlines",
        "pending_gb",
        "prev_kind",
        "section",
        "state",
    )

    def __init__(self, name: str) -> None:
        self.name = name
        self.nlines = 0  # lines of the current record so far
        self.fed_at = 0  # when this stream last got a line (router clock)
        self.last_kind = ""  # "frame" / "source" / "" : what the previous line of this stream was
        self.prev_kind = ""
        self.pending_gb: str | None = None
        self.draft: _Draft | None = None
        self.state = IDLE
        self.blank_run = 0
        self.section: str | None = None  # which dynamo section continuation lines extend

    @property
    def active(self) -> bool:
        return self.state != IDLE

    def line_at(self, k: int) -> int | None:
        """Hash of the k-th line of the current record, if known."""
        d = self.draft
        if d is None or k >= len(d.hashes):
            return None
        return d.hashes[k]

    def at_natural_end(self) -> bool:
        d = self.draft
        if d is None:
            return False
        if d.trailer:
            return self.state == AFTER
        if self.state == EXPLAIN_REPORT:
            return self.section == "tail"  # past the break reasons: ops, guards, compile times
        if self.state in (BODY, AFTER) and not d.dynamo_body and d.blocks:
            last = d.blocks[-1]
            return bool(last.type) and not _DYNAMO_TYPE.search(last.type)
        return False

    def accepts(self, text: str, continues: bool = True) -> int:
        """How well this unprefixed line continues the current record: 0 not at all (it would end
        it), 1 plausibly (blank lines, message continuation), 2 exactly what comes next (a frame in
        a traceback, the source line after a frame, a dynamo section)."""
        st = self.state
        d = self.draft
        if st == IDLE or d is None:
            return 0
        stripped = text.strip()
        if _ELISION.match(text):
            return 1
        if st == EXPLAIN_REPORT and (_EXPLAIN_LINE.match(stripped) or _EXPLAIN_TAIL.match(stripped)
                                     or _EXPLAIN_REASON.match(stripped) or _FRAME_SUMMARY.match(stripped)
                                     or FRAME.match(text)):
            return 2  # explain()'s report goes on: its next reason, a stack, its ops and guards
        if FRAME.match(text) or _FRAME_NOFUNC.match(text):
            return 2 if st in (TB, USER) or (st == AFTER and not d.trailer) else 0
        if not stripped:
            return 1
        if text[:1].isspace():
            if st in (TB, USER) and self.last_kind in ("frame", "source"):
                # The source line after a frame, but only right after it: other writes in between
                # break that evidence.
                return 2 if continues else 1
            if (_EXPLANATION.match(text) and d.explanation) or (_DEBUG_CTX.match(text) and d.debug_context):
                return 0  # a report has one of each: this is another rank's copy
            if _EXPLANATION.match(text) or _HINT.match(text) or _DEBUG_CTX.match(text):
                last_type = d.blocks[-1].type if d.blocks else ""
                fresh = st in (BODY, AFTER) and not d.trailer and (not last_type or _DYNAMO_TYPE.search(last_type))
                return 2 if fresh else (0 if d.trailer else 1)
            if st == AFTER and d.trailer:
                return 1 if _TRAILER_TAIL.match(text) else 0
            return 1
        if d.trailer and (USER_CODE.match(text) or (_TRAILER.match(text) and not text.startswith("You can suppress"))):
            return 0  # a record has one trailer; this one belongs to another rank's copy
        if (USER_CODE.match(text) and d.saw_user_code) or (d.gb_id and _GB_LINK.search(text)):
            return 0
        if stripped in (_CAUSE, _CONTEXT) or _TRAILER.match(text) or USER_CODE.match(text):
            return 2 if st in (BODY, AFTER, USER) else 1
        if TB_START.match(text):
            return 2 if st == AFTER and _awaiting_chained(d) else 0
        if st == TB:
            return 2 if (_EXC_IN_TB.match(text) or stripped.startswith(("[...", "..."))) else 0
        if st in (BODY, AFTER):
            if _PCG_HINT.match(text) or _BODY_MARKERS.match(text):
                return 2
            if st == AFTER and _awaiting_chained(d):
                return 2
            if st == BODY and self.blank_run == 0 and not _starts_record(text) and not _LOGLIKE.match(text) \
                    and _has_room(d):
                return 1
            return 1 if self._dynamo_message_continues(d, text) else 0
        if st in (GB, WARN):
            return 0 if (GB_HEADER.match(text) or _starts_record(text) or not _has_room(d)) else 1
        return 0

    def feed(self, line: LogLine) -> list[CrashRecord]:
        out: list[CrashRecord] = []
        self.nlines = self.nlines + 1 if self.state != IDLE else 1
        self.prev_kind, self.last_kind = self.last_kind, ""
        # A line can end the current record and then start another: loop until it is consumed.
        for _ in range(3):
            consumed = self._step(line, out)
            if consumed:
                break
        return out

    def close(self, complete: bool = False) -> CrashRecord | None:
        d = self.draft
        self.draft = None
        self.state = IDLE
        self.section = None
        if d is None:
            return None
        if d.outer is not None and not d.user_frames:
            d = d.outer  # explain()'s last reason was cut before its stack: the one before it has one
        # A record is complete when it reached its natural end (trailer, or an exception line of a
        # plain traceback); end of input in the middle of frames means it was cut off.
        return d.finish(complete)

    # -- helpers -------------------------------------------------------------------------------
    def _start(self, kind: str, line: LogLine, lead: str | None = None) -> _Draft:
        if line.artifact == "graph_breaks":
            kind = "graph_break"  # whatever the graph-break logger printed is a logged break, never fatal
        self.draft = _Draft(kind, line.source, line.lineno, line.rank if line.rank else None, lead=lead)
        self.blank_run = 0
        self.section = None
        return self.draft

    def _end(self, out: list[CrashRecord], complete: bool = True) -> None:
        rec = self.close(complete)
        if rec is not None:
            out.append(rec)

    def _add_frame(self, frames: list[Frame], m: re.Match[str]) -> None:
        if len(frames) >= MAX_FRAMES:
            frames.pop(0)
        g = m.groupdict()
        if g.get("cell"):  # IPython's `Cell In[5], line 3`: the notebook cell is the user's code
            frames.append(Frame(f"Cell {g['cell']}", int(g["cline"]), "<cell>"))
        else:
            frames.append(Frame(g["file"], int(g.get("line") or 0), g.get("func") or "<unknown>"))
        self.last_kind = "frame"
        if m.re is IPY_FRAME and self.draft is not None:
            self.draft.ipython = True
        elif m.re is PYTEST_FRAME and self.draft is not None:
            self.draft.pytest = True

    def _add_source(self, frames: list[Frame], text: str) -> None:
        if self.prev_kind in ("frame", "source"):
            self.last_kind = "source"
        d = self.draft
        if d is not None and d.ipython:
            # numbered context lines; the one marked `-->` is the line that ran
            sm = IPY_SOURCE.match(text)
            if sm is not None:
                if sm.group("arrow") and frames:
                    f = frames[-1]
                    # IPython before 8.0 gives the line number only here
                    at = f.line or int(sm.group("n"))
                    frames[-1] = Frame(f.file, at, f.function, sm.group("src").strip())
                return
        if frames and frames[-1].source is None:
            f = frames[-1]
            frames[-1] = Frame(f.file, f.line, f.function, text.strip())
            if d is not None:
                d.source_indent = len(text) - len(text.lstrip())

    def _exception_line(self, d: _Draft, m: re.Match[str]) -> None:
        b = d.block()
        if b.type or b.message_lines:
            b = d.new_block()
        b.type = m.group("type")
        msg = m.group("msg")
        if msg is not None:
            b.message_lines.append(msg)
        self.state = BODY
        self.section = "message"
        self.blank_run = 0

    def _dynamo_section(self, d: _Draft, text: str) -> bool:
        """Explanation / Hint / debug context / link lines; True when the line was one."""
        m = _EXPLANATION.match(text)
        if m:
            d.explanation.append(m.group("t"))
            self.section = "explanation"
            d.dynamo_body = d.structured = True
            return True
        m = _HINT.match(text)
        if m:
            d.hints.append(m.group("t"))
            self.section = "hint"
            d.dynamo_body = d.structured = True
            return True
        m = _DEBUG_CTX.match(text)
        if m:
            d.debug_context.append(m.group("t"))
            self.section = "context"
            d.dynamo_body = d.structured = True
            return True
        m = _GB_LINK.search(text)
        if m:
            g = _GB_ID.search(m.group("url"))
            if g:
                d.gb_id = f"GB{g.group(1)}"
            d.dynamo_body = True
            self.section = None
            return True
        return False

    def _set_gb_type(self, d: _Draft) -> None:
        """The exception message's first line is the gb_type in the structured (2.7+) format."""
        if d.gb_type is None and d.structured and d.blocks:
            for b in reversed(d.blocks):
                if b.message_lines:
                    d.gb_type = b.message_lines[0].strip()
                    break

    # -- the state machine ---------------------------------------------------------------------
    def _step(self, line: LogLine, out: list[CrashRecord]) -> bool:
        """One line in the current state; False when the line ended the record and must be fed again."""
        text = line.text
        st = self.state
        d = self.draft
        if d is not None and line.record_start:
            # SGLang prints its prefix once per record: this line starts something new.
            self._end(out, st == AFTER and (d.trailer or not d.dynamo_body) or st == BODY and not d.dynamo_body
                      or self.at_natural_end())
            return self._idle(line, out)
        if d is not None:
            d.keep(line)
        if st == IDLE:
            return self._idle(line, out)
        if st == SKIP:
            if not text.strip() or text[:1].isspace() or FRAME.match(text):
                return True
            self.state = IDLE
            return self._idle(line, out)
        assert d is not None
        if _ELISION.match(text):
            return True  # `...` / `[... 36 lines elided ...]` pasted into a bug report: the record goes on
        return _STATES[st](self, line, d, out)

    def _warning(self, line: LogLine, d: _Draft, out: list[CrashRecord]) -> bool:
        """A multi-line warning entry (recompile limit, recompiles): its indented lines."""
        text = line.text
        stripped = text.strip()
        if stripped.startswith("- ") and d.user_frames:
            # the failed guard's user stack (`    -   File "x.py", line 10, in f` / `    -     src`)
            fm = FRAME.match(stripped[1:])
            gm = GUARD_FAILURE.match(stripped) if fm is None and d.gb_header_only else None
            if gm is not None and not is_torch(gm.group("file")):
                # the guard's source comment names the user's line it came from, until a user stack does
                d.user_frames[:] = [Frame(gm.group("file"), int(gm.group("line")), gm.group("func"))]
            if fm:
                if d.gb_header_only:
                    d.user_frames.clear()
                    d.gb_header_only = False
                self._add_frame(d.user_frames, fm)
            elif self.prev_kind == "frame" and stripped[1:].strip():
                self._add_source(d.user_frames, stripped[1:])
        if stripped and (text[:1].isspace() or _RECOMPILE_FN.match(text) or line.level is not None
                         and line.prefixed and not _starts_record(text)):
            if d.evidence == "recompile-body" and stripped.startswith(_RECOMPILE_BODY_TAIL):
                d.dynamo_body = True  # what only the recompile-limit warning prints
            if text.startswith(("To log all recompilation reasons", "To diagnose", "to diagnose recompilation")):
                if d.evidence == "recompile-body":
                    d.block().message_lines.append(stripped)
                return True
            if text[:1].isspace() or _RECOMPILE_FN.match(text):
                d.block().message_lines.append(stripped)
                return True
        if not stripped:
            return True
        if text.startswith(("To log all recompilation reasons", "To diagnose recompilation")):
            return True
        if d.evidence == "recompile-body" and text.startswith("to diagnose recompilation issues, see "):
            d.dynamo_body = True  # 2.0's last line of the warning, at column 0
            d.block().message_lines.append(stripped)
            return True
        self._unkeep(d)
        self._end(out, True)
        return False

    def _chained(self, line: LogLine, d: _Draft, out: list[CrashRecord]) -> bool | None:
        """Chain markers and a new `Traceback` line, which mean the same in every state of a traceback
        record; None when the line is neither."""
        text = line.text
        stripped = text.strip()
        st = self.state
        # Chain markers continue the record whatever state we are in.
        if stripped == _CAUSE or stripped == _CONTEXT:
            d.new_block("cause" if stripped == _CAUSE else "context")
            self.state = AFTER
            self.section = None
            return True

        m = TB_START.match(text)
        if m:
            if st == AFTER and _awaiting_chained(d):
                # The chained exception's own traceback.
                self.state = TB
                return True
            if st == BODY and (_logged_message_only(d) or _guard_error_header(d)):
                # logging's `log.exception(msg)` / `exc_info=True`: the message, then the traceback of
                # the exception it logs (inductor's `Error from lowering`; torch/_guards.py's `Error while
                # creating guard:` and the guard's fields), one failure.
                d.new_block()
                self.state = TB
                return True
            self._unkeep(d)
            self._end(out, True)
            return False

        return None

    def _traceback(self, line: LogLine, d: _Draft, out: list[CrashRecord]) -> bool:
        """Reading the `File ...` frames of a traceback."""
        done = self._chained(line, d, out)
        if done is not None:
            return done
        text = line.text
        stripped = text.strip()
        fm = FRAME.match(text) or _FRAME_NOFUNC.match(text) or IPY_FRAME.match(text) or \
            (d.ipython and IPY_OLD_FRAME.match(stripped) or None) or (d.pytest and PYTEST_FRAME.match(text) or None)
        if fm:
            self._add_frame(d.block().frames, fm)
            return True
        if not stripped:
            self.blank_run += 1
            return True
        if _TOOLCHAIN_OUTPUT.match(text):
            return True  # a build's stderr interleaved with the traceback: not its source line nor its exception
        if FRAME_CUT.match(text):
            return True  # a frame line cut by a wrap whose rest did not follow (Rewrap): no frame to read
        if d.ipython and stripped.startswith(("->", "-->")) or d.ipython and IPY_SOURCE.match(text):
            self._add_source(d.block().frames, text)
            return True
        if text[:1].isspace():
            if stripped == "..." or _CARET.match(text):
                self.last_kind = "source" if self.prev_kind in ("frame", "source") else ""
                return True
            if self.prev_kind == "source" and len(text) - len(text.lstrip()) < d.source_indent:
                em = _INDENTED_EXC.match(stripped)
                if em:  # a paste indented as a whole: its exception line is indented, less than the source
                    self._exception_line(d, em)
                    return True
            self._add_source(d.block().frames, text)
            return True
        if stripped.startswith(("[...", "...")) or d.ipython and _COLLAPSED_FRAMES.match(stripped):
            return True  # an elision marker pasted into the traceback (Colab's collapsed `21 frames`)
        if _TRAILER.match(text):
            # Frames followed by the trailer: the `from user code:` header was cut off.
            blk = d.block()
            d.user_frames.extend(blk.frames)
            blk.frames.clear()
            d.trailer = True
            self.state = AFTER
            return True
        if USER_CODE.match(text):
            self.state = USER
            return True
        em = _EXC_IN_TB.match(text)
        if em:
            self._exception_line(d, em)
            return True
        if self._unindented_source(d.block().frames, text):
            return True
        self._unkeep(d)
        self._end(out, False)
        return False

    def _unindented_source(self, frames: list[Frame], text: str) -> bool:
        """A paste that lost its indentation (rendered markdown) prints a frame's source line and its
        carets at column 0: right after a frame, such a line is still the source line."""
        if self.prev_kind not in ("frame", "source"):
            return False
        if _CARET.match(text):
            self.last_kind = "source"
            return True
        if self.prev_kind == "frame" and not _LOGLIKE.match(text) and not _starts_record(text):
            self._add_source(frames, text)
            return True
        return False

    def _user_code(self, line: LogLine, d: _Draft, out: list[CrashRecord]) -> bool:
        """Reading the frames of `from user code:`."""
        done = self._chained(line, d, out)
        if done is not None:
            return done
        text = line.text
        stripped = text.strip()
        fm = FRAME.match(text) or _FRAME_NOFUNC.match(text)
        if fm:
            self._add_frame(d.user_frames, fm)
            return True
        if not stripped:
            self.state = AFTER
            self.blank_run = 1
            return True
        if text[:1].isspace():
            if _CARET.match(text):
                self.last_kind = "source" if self.prev_kind in ("frame", "source") else ""
            else:
                self._add_source(d.user_frames, text)
            return True
        if _TRAILER.match(text):
            d.trailer = True
            self.state = AFTER
            return True
        if stripped == _FAKE_FALLBACK_END:
            d.block().message_lines.append(stripped)
            self.state = AFTER
            return True
        if self._unindented_source(d.user_frames, text):
            return True
        self._unkeep(d)
        self._end(out, d.trailer)
        return False

    def _message(self, line: LogLine, d: _Draft, out: list[CrashRecord]) -> bool:
        """BODY (after an exception line) and AFTER (after a blank line or the trailer)."""
        done = self._chained(line, d, out)
        if done is not None:
            return done
        text = line.text
        stripped = text.strip()
        st = self.state
        if d.trailer and (USER_CODE.match(text) or (_TRAILER.match(text) and not text.startswith("You can suppress"))):
            self._unkeep(d)
            self._end(out, True)
            return False
        if st == BODY and _RULE_LINE.match(stripped) and d.blocks and _DYNAMO_TYPE.search(d.blocks[-1].type):
            # a rule under a dynamo message, as a blank line: the stack below it is the user code it traced
            self.state = AFTER
            return True
        if d.repr_close and stripped.endswith(d.repr_close):
            last = stripped[: -len(d.repr_close)].strip()
            if last and not self._dynamo_section(d, last) and not _TRAILER.match(last):
                d.block().message_lines.append(last)
            d.repr_close = ""
            d.trailer = True
            self.state = AFTER
            self.section = None
            return True
        if USER_CODE.match(text):
            d.dynamo_body = True
            d.saw_user_code = True
            d.user_frames.clear()  # `from user code:` is the canonical stack; drop any earlier copy
            self._set_gb_type(d)
            self.state = USER
            return True
        if _USER_STACK.match(text):
            self.state = USER
            return True
        if _TRAILER.match(text) or _TRAILER_TAIL.match(text):
            d.trailer = True
            self._set_gb_type(d)
            self.state = AFTER
            self.blank_run = 0
            return True
        if self._dynamo_section(d, text):
            self._set_gb_type(d)
            self.state = BODY
            self.blank_run = 0
            return True
        if _PCG_HINT.match(text) or _BODY_MARKERS.match(text):
            if st == BODY and _BODY_MARKERS.match(text):
                d.block().message_lines.append(stripped)
            return True
        if not stripped:
            self.blank_run += 1
            if st == BODY:
                self.state = AFTER
            if self.blank_run > 3 and not d.dynamo_body:
                self._end(out, True)
            return True
        fm = FRAME.match(text)
        if fm and st == AFTER and not d.trailer and not _awaiting_chained(d) and _shows_dynamo(d):
            # Frames right after a blank line: the `from user code:` header was lost. (After an exception
            # dynamo did not raise they are another traceback, cut: a paste's `...` elided its head.)
            self._add_frame(d.user_frames, fm)
            self.state = USER
            return True
        if text[:1].isspace() and (st == BODY or (d.dynamo_body and self.section is not None)):
            # Continuation of the message or of a dynamo section (explanations span indented lines,
            # sometimes after a blank line).
            self.state = BODY
            if self.section in ("explanation", "hint", "context"):
                target = {"explanation": d.explanation, "hint": d.hints, "context": d.debug_context}[self.section]
                if target:
                    target[-1] = target[-1] + " " + stripped
                return True
            d.block().message_lines.append(stripped)
            return True
        if st == AFTER and _awaiting_chained(d):
            # Chained exception printed without its own traceback (torch 2.8+ strips it).
            em = _EXC_IN_TB.match(text) or EXC_FREE.match(text)
            if em and _looks_like_exception(em.group("type")):
                self._exception_line(d, em)
                return True
        if st == BODY and self.blank_run == 0 and not _starts_record(text) and not _LOGLIKE.match(text) \
                and _has_room(d):
            # Multi-line exception message (e.g. BackendCompilerFailed's second line, ImportError details).
            if self.section in ("explanation", "hint", "context"):
                self.section = "message"
            d.block().message_lines.append(stripped)
            return True
        if self._dynamo_message_continues(d, text):
            # Dynamo messages run over several paragraphs before their trailer (UserError's
            # "Caused by:" / "For more information ..." / "User Stack ...").
            self.section = "message"
            d.block().message_lines.append(stripped)
            return True
        self._unkeep(d)
        self._end(out, d.trailer or not d.dynamo_body)
        return False

    def _dynamo_message_continues(self, d: _Draft, text: str) -> bool:
        if d.trailer or not d.blocks or not _DYNAMO_TYPE.search(d.blocks[-1].type):
            return False
        if len(d.blocks[-1].message_lines) > MAX_MESSAGE_PARAGRAPH_LINES:
            return False
        return not (_starts_record(text) or _LOGLIKE.match(text))

    def _unkeep(self, d: _Draft) -> None:
        """The line that ended a record belongs to whatever comes next."""
        if d.tail:
            d.tail.pop()
        elif d.head:
            d.head.pop()

    def _idle(self, line: LogLine, out: list[CrashRecord]) -> bool:
        """No record is open: what is this line evidence of (evidence.RULES), and the record it opens."""
        text = line.text
        if not text or not text.strip() or not may_be_evidence(line):
            return True
        for rule in candidates(line):
            m = rule.test(line)
            if m is not None and _OPENERS[rule.kind](self, line, m):
                return True
        return True

    # -- openers: one per kind of evidence (evidence.RULES); True when the line was taken -----------
    def _open(self, kind: str, line: LogLine, state: str, lead: str | None = None, section: str | None = None,
              evidence: str | None = None) -> _Draft:
        d = self._start(kind, line, lead=lead)
        d.keep(line)
        d.evidence = evidence
        self.state = state
        self.section = section
        return d

    def _open_traceback(self, line: LogLine, m: re.Match[str]) -> bool:
        self._open(_tb_kind(line), line, TB, lead=_clean_lead(m.group("lead"))).new_block()
        return True

    def _open_ipython(self, line: LogLine, m: re.Match[str]) -> bool:
        self._open_traceback(line, m)
        assert self.draft is not None
        self.draft.ipython = True
        self.draft.header_type = m.group("type")
        return True

    def _open_frame(self, line: LogLine, m: re.Match[str]) -> bool:
        # A traceback whose head was cut off (common in pasted fragments).
        d = self._open(_tb_kind(line), line, TB)
        d.logged_stack = line.level in ("DEBUG", "INFO")
        self._add_frame(d.block().frames, m)
        return True

    def _open_frame_cut(self, line: LogLine, m: re.Match[str]) -> bool:
        # A traceback cut above a frame line that a terminal wrapped, its rest not on the next line (a
        # rest that is was joined to it by Rewrap): the record opens, with no frame to read.
        self._open(_tb_kind(line), line, TB).new_block()
        return True

    def _open_call_stack(self, line: LogLine, m: re.Match[str]) -> bool:
        self.state = SKIP  # a warning's call stack: not a crash
        return True

    def _open_user_code(self, line: LogLine, m: re.Match[str]) -> bool:
        self._open("partial", line, USER).dynamo_body = True
        return True

    def _open_pcg_failed(self, line: LogLine, m: re.Match[str]) -> bool:
        d = self._open("partial", line, BODY, lead="Piecewise CUDA Graph failed with error", section="message")
        b = d.new_block()
        msg = m.group("msg").strip()
        em = EXC_FREE.match(msg) if msg else None
        if em and em.group("lead") is None and _looks_like_exception(em.group("type")) and "." in em.group("type"):
            b.type = em.group("type")
            if em.group("msg"):
                b.message_lines.append(em.group("msg"))
        elif msg:
            b.message_lines.append(msg)
        return True

    def _open_graph_break(self, line: LogLine, m: re.Match[str]) -> bool:
        d = self._open("graph_break", line, GB, section="header")
        d.gb_artifact = True
        b = d.new_block()
        if m.group("msg"):
            b.message_lines.append(m.group("msg"))
        elif self.pending_gb:
            b.message_lines.append(self.pending_gb)
        self.pending_gb = None
        f, ln = m.group("file") or m.group("file2"), m.group("line") or m.group("line2")
        if f and ln:
            d.lead = f"{f}:{ln}"
            # Duplicate graph breaks print only this location; it stands in for the stack
            # until (unless) a `User code traceback:` follows.
            d.user_frames.append(Frame(f, int(ln), "<graph break>"))
            d.gb_header_only = True
        return True

    def _open_graph_break_reason(self, line: LogLine, m: re.Match[str]) -> bool:
        # A graph_breaks log entry whose `Graph break in user code at` line was cut: the reason is the
        # message (its `Unsupported: ` the type), `User code traceback:` then gives the user stack.
        d = self._open("graph_break", line, GB, section="header")
        d.gb_artifact = True
        b = d.new_block()
        b.type = m.group("type") or ""
        b.message_lines.append(m.group("msg"))
        self.section = "message"
        return True

    def _open_cxx_fatal(self, line: LogLine, m: re.Match[str]) -> bool:
        b = self._open("partial", line, BODY, section="message").new_block()
        b.type = m.group("type") or ""
        if m.group("msg"):
            b.message_lines.append(m.group("msg"))
        return True

    def _open_item_advice(self, line: LogLine, m: re.Match[str]) -> bool:
        # torch's `.item()` advice, printed before the graph-break entry it explains
        self.pending_gb = line.text.split(", consider setting")[0]
        self.state = SKIP
        return True

    def _open_item_advice_rest(self, line: LogLine, m: re.Match[str]) -> bool:
        # the advice's setting lines, its first line cut: what survives says which break comes next
        if self.pending_gb is None:
            self.pending_gb = line.text.strip()
        self.state = SKIP
        return True

    def _open_dynamo_explanation(self, line: LogLine, m: re.Match[str]) -> bool:
        # A dynamo message without its exception line (`print(e)` of a caught Unsupported, a paste that starts
        # inside it): its 2.7+ sections say what dynamo rejected, `from user code:` may follow.
        return self._open_dynamo_section(line, "explanation", m.group("t"))

    def _open_dynamo_debug_context(self, line: LogLine, m: re.Match[str]) -> bool:
        # the same message's last section, the lines above it out of view or not recognised
        return self._open_dynamo_section(line, "context", m.group("t"))

    def _open_dynamo_section(self, line: LogLine, section: str, text: str) -> bool:
        d = self._open("partial", line, BODY, section=section)
        d.new_block()
        (d.explanation if section == "explanation" else d.debug_context).append(text)
        d.dynamo_body = d.structured = True
        return True

    def _open_wont_convert(self, line: LogLine, m: re.Match[str]) -> bool:
        # suppress_errors turned the failure into this warning: the run goes on, eagerly. The header
        # names the function dynamo gave up on (its first line), the outermost frame of what it traced.
        d = self._open("warning", line, GB, lead=line.text.strip(), section="header")
        d.new_block()
        d.dynamo_body = True
        d.user_frames.append(Frame(m.group("file"), int(m.group("line")), m.group("func")))
        return True

    def _open_explain(self, line: LogLine, m: re.Match[str]) -> bool:
        # The user printed explain()'s report: a finding (each break reason a graph break); the first
        # reason's stack is where the first graph break is.
        d = self._open("graph_break", line, EXPLAIN_REPORT, section="header")
        d.gb_artifact = True
        d.new_block()
        return True

    def _explain(self, line: LogLine, out: list[CrashRecord]) -> bool:
        # Each break reason is a finding of its own, with its own stack.
        d = self.draft
        assert d is not None
        stripped = line.text.strip()
        reason = _EXPLAIN_REASON.match(stripped)
        if self.section != "tail" and (reason is not None or stripped.startswith("Break Reason ")):
            if d.block().message_lines:
                d = self._next_explain_reason(line, out)
            if reason is not None:
                d.block().message_lines.append((reason.group("msg") or reason.group("msg2")).strip())
            self.section = "user"
            return True
        fm = FRAME.match(line.text) or _FRAME_SUMMARY.match(stripped)
        if fm is not None:
            if self.section != "tail" and d.block().message_lines:
                self._add_frame(d.user_frames, fm)
                if d.outer is not None and len(d.user_frames) == 1:
                    self._fold_explain_caller(d, out)
                self.section = "user"
            return True
        if self.section != "tail" and self._dynamo_section(d, stripped):  # 2.7+: the reason's Explanation, Hints
            self._set_gb_type(d)
            return True
        if _EXPLAIN_TAIL.match(stripped):
            self.section = "tail"
            return True
        if not stripped or line.text[:1].isspace() or _EXPLAIN_LINE.match(stripped):
            if self.section == "user" and stripped and d.user_frames and not stripped.startswith("<"):
                self._add_source(d.user_frames, line.text)
            return True
        if d.outer is not None and not d.user_frames:
            out.append(d.outer.finish(True))
            d.outer = None
        if d.block().message_lines:
            self._end(out, True)
        else:
            self.close()  # 2.0's header of a report without breaks: nothing to report
        return False

    def _next_explain_reason(self, line: LogLine, out: list[CrashRecord]) -> _Draft:
        """The next break reason of an explain() report: a new record; the previous one is held (as `outer`)
        until the new one's first frame shows whether it was only that break's caller."""
        prev = self.draft
        assert prev is not None
        if prev.outer is not None:  # the previous reason showed no stack: its own previous one stands alone
            out.append(prev.outer.finish(True))
            prev.outer = None
        d = self._open("graph_break", line, EXPLAIN_REPORT, section="user")
        d.gb_artifact = True
        d.new_block()
        if prev.user_frames:
            d.outer = prev
        else:
            out.append(prev.finish(True))
        return d

    def _fold_explain_caller(self, d: _Draft, out: list[CrashRecord]) -> None:
        """torch 2.0's explain() reports a break inside an inlined call once per enclosing frame: the call
        in the root frame, then (resumed there) the call in the callee, down to the frame that really broke,
        each with the same reason. A previous reason of the same kind whose line calls this reason's
        function is that break's caller: its frames go on top of this one's stack, not into a report."""
        outer = d.outer
        assert outer is not None
        d.outer = None
        top = outer.user_frames[-1]
        here = d.user_frames[0]
        head = (outer.block().message_lines or [""])[0].split(" ", 1)[0]
        same_kind = head != "" and head == (d.block().message_lines or [""])[0].split(" ", 1)[0]
        called = [c.rsplit(".", 1)[-1] for c in _CALL_NAME.findall((top.source or "").split("#", 1)[0])]
        if same_kind and called and (here.function in called or here.function in ("forward", "__call__")):
            d.user_frames[:0] = outer.user_frames
            d.start_line = outer.start_line
        else:
            out.append(outer.finish(True))

    def _open_fake_run_failed(self, line: LogLine, m: re.Match[str]) -> bool:
        # dynamo's TorchRuntimeError message whose `torch._dynamo.exc.TorchRuntimeError:` was cut off:
        # the failure itself, with `from user code:` to follow.
        d = self._open("partial", line, BODY, section="message")
        d.new_block().message_lines.append(line.text.strip())
        d.dynamo_body = True
        return True

    def _open_compile_message(self, line: LogLine, m: re.Match[str]) -> bool:
        # A message only torch.compile writes, its exception line lost (quoted by an application's logger, a
        # one-line paste); a `Warning:` before it is a finding of a run that goes on.
        head = line.text[: m.start()]
        if line.level in ("DEBUG", "INFO") or head.strip() and _QUOTED_AFTER.search(head) is None:
            return False  # a logged section of a report (its own record), or a line a terminal wrapped mid-word
        # fatal where the head says an error was raised (`Request failed: Error: ...`); a bare copy of a message
        # that is a graph break unless fullgraph is on, or a warning, is a finding
        fatal = _RAISED_HEAD.search(head) is not None
        d = self._open("partial" if fatal else "warning", line, BODY, lead=head.strip(" :`'\"") or None,
                       section="message", evidence="compile-message")
        d.new_block().message_lines.append(line.text[m.start():].strip().rstrip("`'\""))
        d.dynamo_body = m.group("dyn") is not None
        return True

    def _open_graph_break_warning(self, line: LogLine, m: re.Match[str]) -> bool:
        # A warning, not an error: the frame ran with a graph break. The file is dynamo's own (where it
        # warned), not the user's; the next indented line is the warning's source line (`warn_once(msg)`).
        d = self._open("warning", line, GB, lead=line.text.strip(), section=WARNING_SOURCE)
        d.new_block().message_lines.append(m.group("msg"))
        d.dynamo_body = True
        return True

    def _open_recompile_limit(self, line: LogLine, m: re.Match[str]) -> bool:
        b = self._open("warning", line, WARN).new_block()
        b.message_lines.append(line.text[m.start():].strip())
        return True

    def _open_recompile_body(self, line: LogLine, m: re.Match[str]) -> bool:
        # The recompile-limit warning whose header line was cut: its `function:` line. It is dynamo's
        # only once the lines only that warning prints follow (`last reason:`, `To log all
        # recompilation reasons`): _warning marks it then.
        d = self._open("warning", line, WARN, evidence="recompile-body")
        d.new_block().message_lines.append(line.text.strip())
        return True

    def _open_guard_error(self, line: LogLine, m: re.Match[str]) -> bool:
        d = self._open("partial", line, BODY, section="message")
        d.new_block().message_lines.append("Error while creating guard:")
        d.dynamo_body = True
        return True

    def _open_banner(self, line: LogLine, m: re.Match[str]) -> bool:
        # dynamo's trailer with no exception before it in view: the failure's own lines were lost.
        d = self._open("partial", line, AFTER, evidence="banner")
        d.trailer = True
        return True

    def _open_failed_inlining(self, line: LogLine, m: re.Match[str]) -> bool:
        # Logged as the error propagates out of each inlined call, innermost first; the exception (if
        # any) comes later. Each line is one frame of the traced chain.
        d = self._open("warning", line, INLINE, lead=line.text.strip(), evidence="failed-inlining")
        d.dynamo_body = True
        d.user_frames.append(Frame(m.group("file"), int(m.group("line")), m.group("func")))
        return True

    def _open_recompiling(self, line: LogLine, m: re.Match[str]) -> bool:
        d = self._open("warning", line, WARN, lead=line.text.strip(), evidence="recompiling")
        d.dynamo_body = True
        f, ln = m.group("file") or m.group("file2"), m.group("line") or m.group("line2")
        # the function's first line, until the failed guard's user stack (if shown) says where
        d.user_frames.append(Frame(f, int(ln), m.group("func")))
        d.gb_header_only = True
        d.new_block().message_lines.append(line.text.strip())
        return True

    def _open_guard_failure(self, line: LogLine, m: re.Match[str]) -> bool:
        # a recompile whose header is out of view: the failed guard's source comment is the user's line
        d = self._open("warning", line, WARN, lead=line.text.strip(), evidence="recompiling")
        d.dynamo_body = True
        d.user_frames.append(Frame(m.group("file"), int(m.group("line")), m.group("func")))
        d.new_block().message_lines.append(line.text.strip())
        return True

    def _open_pytest_summary(self, line: LogLine, m: re.Match[str]) -> bool:
        em = exception_match(m.group("rest"))
        if em is None or em.group("lead") or not _looks_like_exception(em.group("type")):
            return False
        d = self._open("partial", line, BODY, lead=f"FAILED {m.group('test')}")
        self._exception_line(d, em)
        return True

    def _open_torch_log(self, line: LogLine, m: re.Match[str]) -> bool:
        # `CRITICAL:torch._inductor.scheduler:Error in codegen ...`: logged just before it raises; a
        # warning is an error suppress_errors swallowed (the run goes on eagerly): not fatal.
        kind = "warning" if line.level == "WARNING" else "partial"
        d = self._open(kind, line, BODY, lead=line.logger or "torch._inductor", section="message", evidence="torch-log")
        d.new_block().message_lines.append(line.text.strip())
        d.dynamo_body = True
        if _FAKE_FALLBACK_AT.match(line.text):
            self.state = USER  # the frames it names next are the user code dynamo was tracing
        return True

    def _open_exception_repr(self, line: LogLine, m: re.Match[str]) -> bool:
        # the repr's escapes undone: its `\n` are the message's lines (Explanation, Hint, the trailer)
        msg = _REPR_ESCAPE.sub(lambda e: "\n" if e.group(1) == "n" else e.group(1), m.group("msg"))
        t = m.group("type")
        closed = m.group("end") is not None
        if closed and not (_DYNAMO_REPR_TEXT.search(msg) or t.endswith(_DYNAMO_OWN_TYPES)) or \
                not closed and not t.endswith(_DYNAMO_OWN_TYPES) and not t.endswith("Unsupported"):
            return False  # another library's `Unsupported` / `UserError`
        lines = msg.split("\n")
        d = self._open("partial", line, BODY)
        b = d.new_block()
        b.type = t
        b.message_lines.append(lines[0].strip())
        for text in lines[1:]:
            if text.strip() and not self._dynamo_section(d, text) and not _TRAILER.match(text.strip()):
                b.message_lines.append(text.strip())
        d.dynamo_body = True
        if closed:
            d.trailer = True  # a repr is the whole exception: what follows it is not its message
            self.state = AFTER
            self.section = None
        else:
            d.repr_close = m.group("q") + ")"  # the rest of the repr follows, split at its `\n`
            self.section = "message"
        return True

    def _open_minifier(self, line: LogLine, m: re.Match[str]) -> bool:
        # the compile failed and the minifier caught it (it re-raises the error after writing its script)
        d = self._open("partial", line, BODY, lead=line.logger or "torch._dynamo", section="message", evidence="torch-log")
        d.new_block().message_lines.append(line.text.strip())
        d.dynamo_body = True
        return True

    def _open_exception(self, line: LogLine, m: re.Match[str]) -> bool:
        em = EXC_LEADING.match(line.text) or m
        if not _looks_like_exception(em.group("type")):
            return False
        lead = em.group("lead") or None
        t = em.group("type")
        if lead and "." not in t and not (line.level in ("ERROR", "CRITICAL") and line.record_start and em.group("msg")
                                          and t.endswith(("Error", "Exception"))):
            # "something: ValueError" is prose, not an exception line; but an application's logged error
            # record names the exception it caught after its own words (`Failed to load X: OSError: msg`)
            return False
        if lead is None and not ("." in t or _DYNAMO_TYPE.search(t) or t.endswith(("Error", "Exception"))):
            return False
        d = self._start("partial", line, lead=_clean_lead(lead))
        d.keep(line)
        self._exception_line(d, em)
        return True

    def _inlining(self, line: LogLine, out: list[CrashRecord]) -> bool:
        d = self.draft
        assert d is not None
        for rule in RULES:
            if rule.kind == "failed-inlining":
                m = rule.test(line)
                if m is not None:
                    # the error left an outer inlined call: that call is the next frame out
                    d.user_frames.insert(0, Frame(m.group("file"), int(m.group("line")), m.group("func")))
                    self.blank_run = 0
                    return True
        self.blank_run += 1
        if line.level == "DEBUG" and self.blank_run <= MAX_INLINE_GAP and first_evidence(line) is None:
            self._unkeep(d)
            return True  # dynamo's other debug output in between
        self._unkeep(d)
        self._end(out, True)
        return False

    def _graph_break(self, line: LogLine, out: list[CrashRecord]) -> bool:
        d = self.draft
        assert d is not None
        text = line.text
        stripped = text.strip()
        is_gb_line = line.artifact == "graph_breaks"
        if self.section == WARNING_SOURCE:
            # a Python warning is its line and the source line under it: what follows is not its
            if text[:1].isspace() and stripped:
                self._end(out, True)
                return True
            self._unkeep(d)
            self._end(out, True)
            return False
        gm = GB_HEADER.match(text)
        if gm or (WONT_CONVERT.match(text)):
            self._unkeep(d)
            self._end(out, True)
            return False
        rm = _GB_REASON.match(text)
        if rm:
            if not _GB_ENCOUNTERED.match(rm.group("msg")):
                d.block().message_lines.append(rm.group("msg"))
            self.section = "message"
            return True
        if _GB_ENCOUNTERED.match(text):
            return True
        if _GB_USER_TB.match(text):
            if d.gb_header_only:
                d.user_frames.clear()
                d.gb_header_only = False
            self.section = "user"
            return True
        if text.startswith(("Graph break:", "torch.compile will skip tracing")):
            d.block().message_lines.append(stripped)
            return True
        fm = FRAME.match(text)
        if fm:
            target = d.user_frames if self.section in ("user", "header") else d.block().frames
            self._add_frame(target, fm)
            return True
        if self._dynamo_section(d, text):
            self._set_gb_type(d)
            return True
        if TB_START.match(text):
            self.section = "tb"
            return True
        if self.section == "tb" and stripped and not text[:1].isspace():
            em = _EXC_IN_TB.match(text)
            if em:
                b = d.block()
                if not b.type:
                    b.type = em.group("type")
                    if em.group("msg"):
                        b.message_lines.insert(0, em.group("msg"))
                self.section = "message"
                return True
        if not stripped:
            self.blank_run += 1
            if self.section == "user" and d.user_frames and not is_gb_line:
                self._end(out, True)
            return True
        if text[:1].isspace():
            if self.section in ("user", "header", "tb"):
                frames = d.user_frames if self.section in ("user", "header") else d.block().frames
                if not _CARET.match(text):
                    self._add_source(frames, text)
                return True
            if self.section in ("explanation", "hint", "context"):
                lines = {"explanation": d.explanation, "hint": d.hints, "context": d.debug_context}[self.section]
                if lines:
                    lines[-1] = lines[-1] + " " + stripped
                return True
            d.block().message_lines.append(stripped)
            return True
        if (is_gb_line or (self.section == "message" and not _starts_record(text))) and _has_room(d):
            d.block().message_lines.append(stripped)
            return True
        if _TRAILER.match(text) or USER_CODE.match(text):
            return True
        self._unkeep(d)
        self._end(out, True)
        return False


def _has_room(d: _Draft) -> bool:
    """An exception message continues over at most this many lines: a record left open at the end of
    a rank's output must not swallow the rest of the log (progress bars, other output)."""
    return not d.blocks or len(d.blocks[-1].message_lines) < MAX_MESSAGE_PARAGRAPH_LINES


def _tb_kind(line: LogLine) -> str:
    """A traceback inside WARNING records of torch's own loggers (glog `W1201 ... torch/_dynamo/convert_frame.py:N]`
    on every line) was logged by a run that went on: suppress_errors' `WON'T CONVERT ... due to:` and the
    error it swallowed. It stays a finding, not the crash that ended the run, when a paste cut the header."""
    at = (line.logged_at or "").replace("\\", "/")  # glog names the file from site-packages up on some installs
    return "warning" if line.level == "WARNING" and (at.startswith("torch/") or "/torch/" in at) else "traceback"


def _guard_error_header(d: _Draft) -> bool:
    """torch/_guards.py's logged `Error while creating guard:` with the guard's fields, before its traceback."""
    if len(d.blocks) != 1:
        return False
    b = d.blocks[0]
    return not b.type and not b.frames and b.message_lines[:1] == ["Error while creating guard:"]


def _logged_message_only(d: _Draft) -> bool:
    """A torch logger's error record that so far holds its one message line and nothing else."""
    if d.evidence != "torch-log" or len(d.blocks) != 1:
        return False
    b = d.blocks[0]
    return not b.type and not b.frames and len(b.message_lines) == 1


# symbolic_shapes names the user's line a data-dependent guard came from, in the message of its error
# (UserError, GuardOnDataDependentSymNode): `Caused by: SOURCE  # FILE:LINE in FUNC (torch's frame)`.
_CAUSED_BY = recache.compile(
    r"^Caused by: (?P<src>.*\S)\s+# (?P<file>[^\s:]+):(?P<line>\d+) in (?P<func>[\w<>.]+)(?: \(.*\))?\s*$"
)


def _caused_by(chain: tuple[ExceptionBlock, ...]) -> tuple[Frame, ...]:
    """The user frame a data-dependent error's `Caused by:` line names: where dynamo was, when the
    frames that say so (`from user code:`) were cut off."""
    for b in reversed(chain):
        for ln in b.message.split("\n"):
            m = _CAUSED_BY.match(ln.strip())
            if m is not None:
                return (Frame(m.group("file"), int(m.group("line")), m.group("func"), m.group("src")),)
    return ()


_QUOTED_DYNAMO = recache.compile(r"(?:torch\._|torch)(?:dynamo|inductor)\.exc\.\w")


def _shows_dynamo(d: _Draft) -> bool:
    """The record so far is dynamo's: its sections, or an exception type only dynamo raises, or one
    quoted (`Worker failed with error 'torch._dynamo.exc.UserError: ...`)."""
    return d.dynamo_body or any(_DYNAMO_TYPE.search(b.type) or any(_QUOTED_DYNAMO.search(m) for m in b.message_lines)
                                for b in d.blocks)


def _awaiting_chained(d: _Draft) -> bool:
    """A chain marker was read and the next exception of the chain has not started yet."""
    if len(d.blocks) < 2 or not d.blocks[-2].cause_link:
        return False
    last = d.blocks[-1]
    return not (last.type or last.message_lines or last.frames)


def _starts_record(text: str) -> bool:
    return bool(
        TB_START.match(text)
        or PCG_FAILED.match(text)
        or GB_HEADER.match(text)
        or text.startswith(("INFO", "WARNING", "DEBUG", "ERROR:", "Received sigquit", "SIGQUIT"))
    )


def _looks_like_exception(t: str) -> bool:
    last = t.rsplit(".", 1)[-1]
    if last.endswith("Warning"):
        return False
    return bool(last[:1].isupper() or last[:1] == "_")


def _clean_lead(lead: str | None) -> str | None:
    if not lead:
        return None
    lead = lead.strip().rstrip(":").strip()
    return lead or None


# What a line means in each state of an open record.
_STATES = {
    TB: _Stream._traceback,
    USER: _Stream._user_code,
    BODY: _Stream._message,
    AFTER: _Stream._message,
    GB: lambda s, line, d, out: s._graph_break(line, out),
    INLINE: lambda s, line, d, out: s._inlining(line, out),
    EXPLAIN_REPORT: lambda s, line, d, out: s._explain(line, out),
    WARN: _Stream._warning,
}

# The opener of each kind of evidence (evidence.RULES): how such a line starts a record.
_OPENERS = {
    "traceback": _Stream._open_traceback,
    "frame": _Stream._open_frame,
    "frame-elided": _Stream._open_frame,
    "frame-cut": _Stream._open_frame_cut,
    "traceback-cut": _Stream._open_traceback,
    "ipython-header": _Stream._open_ipython,
    "ipython-frame": _Stream._open_frame,
    "pytest-frame": _Stream._open_frame,
    "call-stack": _Stream._open_call_stack,
    "user-code": _Stream._open_user_code,
    "pcg-failed": _Stream._open_pcg_failed,
    "graph-break": _Stream._open_graph_break,
    "graph-break-reason": _Stream._open_graph_break_reason,
    "cxx-fatal": _Stream._open_cxx_fatal,
    "item-advice": _Stream._open_item_advice,
    "item-advice-rest": _Stream._open_item_advice_rest,
    "wont-convert": _Stream._open_wont_convert,
    "graph-break-warning": _Stream._open_graph_break_warning,
    "compile-message": _Stream._open_compile_message,
    "torch-glog": _Stream._open_torch_log,
    "dynamo-explanation": _Stream._open_dynamo_explanation,
    "guard-failure": _Stream._open_guard_failure,
    "dynamo-debug-context": _Stream._open_dynamo_debug_context,
    "fake-run-failed": _Stream._open_fake_run_failed,
    "recompile-limit": _Stream._open_recompile_limit,
    "recompile-body": _Stream._open_recompile_body,
    "guard-error": _Stream._open_guard_error,
    "banner": _Stream._open_banner,
    "failed-inlining": _Stream._open_failed_inlining,
    "explain": _Stream._open_explain,
    "recompiling": _Stream._open_recompiling,
    "pytest-summary": _Stream._open_pytest_summary,
    "torch-log": _Stream._open_torch_log,
    "triton-compile-failed": _Stream._open_torch_log,
    "finding-log": _Stream._open_torch_log,
    "codegen-error": _Stream._open_torch_log,
    "minifier": _Stream._open_minifier,
    "exception-repr": _Stream._open_exception_repr,
    "exception": _Stream._open_exception,
}

# A dynamo/inductor exception quoted inside another one's message: vLLM's `Worker failed with error
# 'torch._dynamo.exc.Unsupported: ...'`, a server's re-raise, a repr with the quote around it.
_QUOTED = recache.compile(r"(?P<q>['\"]?)(?P<type>(?:torch\._|torch)(?:dynamo|inductor)\.exc\.[A-Z]\w*): (?P<msg>.*)", re.S)


def _unquote(chain: tuple[ExceptionBlock, ...]) -> tuple[ExceptionBlock, ...]:
    """The exception a wrapper quotes, as the chain's cause of that wrapper: the quoted one is what
    failed, and the one a person should read first (CrashRecord.headline)."""
    if not chain or any(_DYNAMO_TYPE.search(b.type) for b in chain):
        return chain
    out: list[ExceptionBlock] = []
    for b in chain:
        m = _QUOTED.search(b.message) if b.message else None
        if m is not None and m.start() > 0:
            msg = m.group("msg")
            q = m.group("q")
            if q and q in msg:
                msg = msg[: msg.rindex(q)]
            out.append(ExceptionBlock(m.group("type"), msg.strip(), (), "cause"))
        out.append(b)
    return tuple(out)


class RecordExtractor:
    """Routes framed lines to per-rank streams and collects finished crash records."""

    def __init__(self) -> None:
        self._streams: dict[str, _Stream] = {}
        self._last: str = ""
        self._recent_active: list[str] = []
        self._clock = 0
        self._held: LogLine | None = None  # a line a hard wrap may have cut, waiting for its next (Rewrap)
        # a line that opened a record and may go on on the next line: it, its stream, the stream before it
        self._opened: tuple[LogLine, str, tuple | None] | None = None
        self._prev: LogLine | None = None  # the line before, with a rank or prefix, fed to an idle stream
        self._held_end = 0  # the number of its last physical line (a line joined from several)
        self._rewrap = Rewrap()
        self._spilled: list[CrashRecord] = []  # records a flush in close_stream gave, for the next feed

    def _stream(self, key: str) -> _Stream:
        s = self._streams.get(key)
        if s is None:
            s = self._streams[key] = _Stream(key)
        return s

    def _route(self, line: LogLine) -> str:
        """Which rank stream an unprefixed line belongs to.

        Processes write a record (or a pipe-sized piece of it) in one go, so a line most likely
        continues the write of the line before it; the exception is a line another rank is due to
        print next because it already printed the same record that far (ranks crash alike).
        """
        if line.rank is not None:
            return line.rank
        if line.prefixed:
            return ""
        text = line.text
        last = self._streams.get(self._last)
        if last is not None and last.state == SKIP and (not text.strip() or text[:1].isspace()):
            return self._last  # a warning's call stack follows its header in the same write
        active = [k for k in self._recent_active if (s := self._streams.get(k)) is not None and s.active]
        if not active:
            return self._last
        scores = {k: self._streams[k].accepts(text, k == self._last) for k in active}
        best = max(scores.values())
        if best == 0:
            # It continues nobody's record, so it must not end one: it goes to the unranked stream
            # (where, in a log without rank prefixes, it ends that stream's record as it should).
            return ""
        if self._last == "" and best == 1 and scores.get("", 0) == 0:
            return ""  # a blank or indented line right after a foreign line belongs to that write
        expecting = self._expecting([k for k, sc in scores.items() if sc > 0], text)
        last_score = scores.get(self._last, 0)
        if last_score > 0 and (not expecting or (self._last in expecting and last_score == best)):
            return self._last
        if expecting:
            return min(expecting, key=lambda k: self._streams[k].fed_at)
        takers = [k for k, sc in scores.items() if sc == best]
        return max(takers, key=lambda k: (self._streams[k].nlines, -self._streams[k].fed_at))

    def _expecting(self, keys: list[str], text: str) -> list[str]:
        """Streams whose next line, by another rank's copy of the same record, is this one."""
        if len(keys) < 2:
            return []
        h = hash(text)
        out = []
        for k in keys:
            s = self._streams[k]
            pos = s.nlines
            for other_key in keys:
                other = self._streams[other_key]
                if other_key != k and other.nlines > pos and other.line_at(pos) == h:
                    out.append(k)
                    break
        return out

    def feed(self, line: LogLine) -> list[CrashRecord]:
        if self._spilled:
            out, self._spilled = self._spilled, []
            return out + self.feed(line)
        out: list[CrashRecord] = []
        end = line.lineno
        head, opened = self._held, self._opened
        self._held = self._opened = None
        if head is not None:
            joined = self._rewrap.join(head, line, self._held_end)
            if joined is None:
                out = self._feed(head)
            else:
                end, line = line.lineno, joined  # and it may go on on the next line in turn
        elif opened is not None:
            joined = self._rewrap.join(opened[0], line, self._held_end)
            if joined is not None:
                _restore(self._streams[opened[1]], opened[2])  # the record its head opened, opened again
                end, line = line.lineno, joined
        if not self._rewrap.may_be_cut(line):
            return out + self._feed_after(line)
        # A line whose rest may be the next line. Inside an open record it is held until then (there every
        # path feeds the next unprefixed line). A line that opens a record is fed now: the record it opened
        # makes every path feed the next line too, and is opened again with the whole line if that is its
        # rest. Any other line goes on as it is (the fast path never feeds what follows it).
        key = self._route(line)
        s = self._streams.get(key)
        if s is not None and s.active and not s.at_natural_end():
            self._held, self._held_end = line, end
            return out
        # (a record at its natural end is not held open by a line that may end it: watch mode reports it now)
        saved = _saved(s)
        out += self._feed_after(line)
        s = self._streams.get(key)
        if s is not None and s.active and s.draft is not None and s.draft.start_line == line.lineno:
            self._opened, self._held_end = (line, key, saved), end
        return out

    def _feed_after(self, line: LogLine) -> list[CrashRecord]:
        """_feed, and a line that opens a record though the line before it (fed to an idle stream, which it
        left idle) was its head, cut inside its log prefix: the record opened again with the whole line.
        Every path feeds that head right before it: a skipped line with a rank or prefix is fed before
        the next line fed (pipeline.scan_located's hint)."""
        prev, self._prev = self._prev, None
        if prev is not None and self._rewrap.rest(prev, line, prev.lineno) is not None:
            key = self._route(line)
            s = self._streams.get(key)
            if s is None or not s.active:
                saved = _saved(s)
                out = self._feed(line)
                s = self._streams[key]
                if s.active and s.draft is not None and s.draft.start_line == line.lineno:
                    whole = self._rewrap.prefix_join(prev, line, prev.lineno)
                    if whole is not None:
                        _restore(s, saved)
                        out += self._feed(whole)
                return out
        out = self._feed(line)
        if (line.rank is not None or line.prefixed) and line.width >= MIN_WRAP_WIDTH and \
                not self._streams[self._last].active:
            self._prev = line
        return out

    def _flush(self) -> list[CrashRecord]:
        head, self._held, self._opened = self._held, None, None
        return self._feed(head) if head is not None else []

    def _feed(self, line: LogLine) -> list[CrashRecord]:
        key = self._route(line)
        self._last = key
        stream = self._stream(key)
        self._clock += 1
        stream.fed_at = self._clock
        out = stream.feed(line)
        if stream.active:
            if key in self._recent_active:
                self._recent_active.remove(key)
            self._recent_active.append(key)
            if len(self._recent_active) > 64:
                self._recent_active.pop(0)
        return out

    def active_streams(self) -> list[str]:
        return [k for k, s in self._streams.items() if s.active]

    def stream_status(self, key: str) -> tuple[int, int, bool] | None:
        """(start line, last line, reached its natural end) of the record open on a stream, if any.

        A record reaches its natural end at its dynamo trailer, or, for a plain traceback, at its
        exception line; later lines could still extend it (a chain), which is why it stays open."""
        if self._held is not None and self._route(self._held) == key:
            # asked while its line waits for a rest (watch mode: the stream went quiet): it is not coming now
            self._spilled.extend(self._flush())
        s = self._streams.get(key)
        if s is None or s.draft is None:
            return None
        d = s.draft
        return d.start_line, d.end_line or d.start_line, s.at_natural_end()

    def take_spilled(self) -> list[CrashRecord]:
        """The records a flush of a held line ended (stream_status, close_stream), for a caller that feeds no
        more lines now (watch mode): in log order, before the record close_stream ends."""
        out, self._spilled = self._spilled, []
        return out

    def close_stream(self, key: str, complete: bool | None = None) -> CrashRecord | None:
        """End the record open on a stream now (watch mode: the rank went quiet). complete=None decides
        as finish() does: complete when it reached its natural end, cut off otherwise."""
        self._spilled.extend(self._flush())  # a held line's rest is not coming: it is fed as it is
        s = self._streams.get(key)
        if s is None:
            return None
        return s.close(complete=s.at_natural_end() if complete is None else complete)

    def finish(self) -> list[CrashRecord]:
        out: list[CrashRecord] = self._spilled + self._flush()
        self._spilled = []
        for s in self._streams.values():
            rec = s.close(complete=s.at_natural_end())
            if rec is not None:
                out.append(rec)
        return out


_STREAM_STATE = ("blank_run", "draft", "fed_at", "last_kind", "nlines", "pending_gb", "prev_kind", "section",
                 "state")


def _saved(s: _Stream | None) -> tuple | None:
    return None if s is None else tuple(getattr(s, a) for a in _STREAM_STATE)


def _restore(s: _Stream, saved: tuple | None) -> None:
    for a, v in zip(_STREAM_STATE, saved if saved is not None else _saved(_Stream(s.name))):
        setattr(s, a, v)


# -- a terminal's hard wrap ------------------------------------------------------------------------------
MIN_WRAP_WIDTH = 60  # no terminal or viewer wraps narrower
_FRAME_HEAD = recache.compile(r'^\s*File "')
_FRAME_DONE = recache.compile(r'", line \d+, in \S')
# the rest of a function name (`time_w` + `rapper`, `<mod` + `ule>`)
_NAME_REST = recache.compile(r"^[\w.<>-]+$")
# a source line that is one word (a paste that lost its indentation): never the rest of a function name
_STATEMENTS = frozenset(("raise", "pass", "return", "break", "continue", "yield", "try", "else", "finally"))


def _cut_fixed(text: str) -> bool:
    """A line that cannot end where it does: a frame line cut before its function, the traceback header
    cut before its colon."""
    return (_FRAME_HEAD.match(text) is not None and _FRAME_DONE.search(text) is None) or \
        ("Traceback" in text and TB_START_CUT.match(text) is not None)


class Rewrap:
    """The lines a hard wrap cut (a terminal copy, `fold`, a handler wrapping to the terminal width), whole
    again: one unit for every kind of line it cuts. The rest of a cut line is the next physical line,
    without the log's prefix, maybe indented (a handler that indents what it wraps). A wrap cuts every line
    at one width, so the width of a line whose cut is certain is learned, and a line of that width is cut:

    - a line that cannot end where it does: a frame line (`File "/p/torch/_dy` + `namo/eval_frame.py", line
      655, in _fn`; `..., li` + `ne 715, in f`), the traceback header (`... call last)` + `:`); certain, at
      any width;
    - a frame line at the wrap's width whose rest is the rest of the function name (`in time_w` + `rapper`;
      before the width is known, a rest no exception type or one-word statement could be: `in _` + `fn`);
    - a line cut inside its log prefix (a long kubectl + vLLM prefix): the prefix runs on in the rest;
      certain;
    - any other line at the wrap's width (an exception line, a message, a section); before the width is
      known, a line whose rest is as wide as it is (both cut at the width: a message over three lines).
    """

    __slots__ = ("pad", "width")

    def __init__(self) -> None:
        self.width = 0  # the wrap's width, once a cut showed it
        self.pad = 0  # the indentation it puts before each rest (the least seen), once a cut showed it

    def rest(self, head: LogLine, line: LogLine, end: int) -> str | None:
        """What `line` adds to `head` if it is the next physical line with no prefix of its own (the wrap's
        indentation dropped: as much as it is known to be, else all); None if it cannot be `head`'s rest."""
        if line.lineno != end + 1 or line.prefixed or line.rank is not None:
            return None
        rest = line.text
        if rest[:2].isspace():
            pad = self.pad
            rest = rest[pad:] if pad and not rest[:pad].strip(" ") else rest.lstrip(" \t")
        return rest or None

    def _learn(self, head: LogLine, line: LogLine) -> None:
        self.width = head.width
        blanks = len(line.text) - len(line.text.lstrip(" "))
        if blanks >= 2 and (not self.pad or blanks < self.pad):
            self.pad = blanks

    def may_be_cut(self, line: LogLine) -> bool:
        """Whether the next line may be this one's rest (a quick test: the line is held until then)."""
        text = line.text
        if _cut_fixed(text):
            return True
        w = line.width
        return w >= MIN_WRAP_WIDTH and (w == self.width or not self.width) and bool(text.strip())

    def prefix_join(self, head: LogLine, line: LogLine, end: int) -> LogLine | None:
        """`head` and its rest `line` as one line when `head` was cut inside its log prefix (`... ERROR 10-18
        10:22:33 [` + `core.py:77] ...`): the prefix runs on in the rest, which is certain."""
        rest = self.rest(head, line, end)
        if rest is None or head.width < MIN_WRAP_WIDTH:
            return None
        text = head.text + rest
        whole = frame_line(head.source, head.lineno, text)
        if len(text) - len(whole.text) <= len(head.text) or not text.endswith(whole.text):
            return None
        self._learn(head, line)
        return LogLine(head.source, head.lineno, whole.text, head.rank or whole.rank,
                       head.prefixed or whole.prefixed, whole.level or head.level, whole.artifact or head.artifact,
                       head.record_start or whole.record_start, whole.logger or head.logger,
                       whole.logged_at or head.logged_at, line.width)

    def join(self, head: LogLine, line: LogLine, end: int) -> LogLine | None:
        """`head` (whose last physical line is line `end`) and its rest `line` as one line (the width of
        its last piece), or None when `line` is not the rest of `head`."""
        rest = self.rest(head, line, end)
        if rest is None:
            return None
        text = head.text + rest
        whole = self.prefix_join(head, line, end)
        if whole is not None:
            return whole
        if _starts_line(rest):
            return None
        if _cut_fixed(head.text):
            if not _whole_fixed(text, line.width == head.width >= MIN_WRAP_WIDTH):
                if rest is line.text or not _whole_fixed(head.text + " " + rest, False):
                    return None
                text = head.text + " " + rest  # the wrap's indentation held the blank it cut at
            if head.width < MIN_WRAP_WIDTH:
                return LogLine(head.source, head.lineno, text, head.rank, head.prefixed, head.level,
                               head.artifact, head.record_start, head.logger, head.logged_at, line.width)
        elif head.width < MIN_WRAP_WIDTH:
            return None
        elif FRAME.match(head.text) is not None:
            if _NAME_REST.match(rest) is None:
                return None
            if head.width != self.width and (self.width or rest in _STATEMENTS or _looks_like_exception(rest)):
                return None
        elif head.width != self.width:
            # the carets under a source line are as wide as it when they run to its end: no cut
            # nor an exception line as wide as the source line above it, by chance (`    ... = x.shape` +
            # `InternalTorchDynamoError: 'NoneType' object has no attribute 'shape'`, 68 columns each)
            if self.width or line.width != head.width or _CARET.match(rest) is not None or _looks_like_exception(rest):
                return None
        self._learn(head, line)
        return LogLine(head.source, head.lineno, text, head.rank, head.prefixed, head.level, head.artifact,
                       head.record_start, head.logger, head.logged_at, line.width)


def _whole_fixed(text: str, cut_again: bool) -> bool:
    """A frame line or traceback header whole again (or, `cut_again`, still cut: a long path over three
    lines, its middle at the wrap's width too)."""
    return (FRAME.match(text) is not None and _FRAME_DONE.search(text) is not None) or \
        _FRAME_NOFUNC.match(text) is not None or TB_START.match(text) is not None or (cut_again and _cut_fixed(text))


def _starts_line(text: str) -> bool:
    """What only ever begins a line of a traceback or a dynamo report, and a paste's elision (`...`): never
    the rest of a cut line."""
    stripped = text.strip()
    return bool(_FRAME_HEAD.match(text) or TB_START.match(text) or USER_CODE.match(text)
                or stripped in (_CAUSE, _CONTEXT) or _ELISION.match(text))


def extract_records(lines: Iterator[LogLine]) -> Iterator[CrashRecord]:
    ex = RecordExtractor()
    for line in lines:
        yield from ex.feed(line)
    yield from ex.finish()
