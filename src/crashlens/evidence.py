"""What a log line is evidence of: the rules, as data, that start a crash record or mark one as dynamo's.

A stream with no record open asks `first_evidence` what the line is; traceback.py's assembler then
opens the record that kind of evidence starts (one small opener per kind). Each rule carries the
substrings that every line it matches holds, so the fast path (prefilter.py) can never skip such a
line: a new kind of evidence is one `Rule` here, its opener, and its fixtures.

`COMPILE_MACHINERY` is the other kind of evidence: frames only torch.compile's own machinery runs, so
a traceback that shows them is a compile failure even when its exception line is out of view.
"""

from __future__ import annotations

import re

from . import recache
from ._struct import dataclass
from .records import Frame, LogLine

TYPE_CHECKING = False  # typing.TYPE_CHECKING without importing typing (~4 ms of start-up)
if TYPE_CHECKING:
    from collections.abc import Callable


@dataclass(frozen=True, slots=True)
class Rule:
    """One kind of line that starts a record when no record is open."""

    kind: str  # the opener that assembles it (traceback._OPENERS)
    markers: tuple[bytes, ...]  # one of these is in every line the rule matches (the prefilter's contract)
    pattern: re.Pattern[str]
    first: str = ""  # characters the framed text can start with ("" any): a cheap test before the regex
    search: bool = False  # pattern.search instead of pattern.match
    on_stripped: bool = False  # match the text with surrounding blanks removed
    when: Callable[[LogLine], bool] | None = None  # a test of the line's prefix (level, logger)
    in_prefix: bool = False  # the markers are in the prefix that framing removes, not in the text
    # Every line it takes holds the markers of this other rule too, so the prefilter needs none of its
    # own (its markers are then only its own cheap test).
    covered_by: str | None = None

    def test(self, line: LogLine) -> re.Match[str] | None:
        text = line.text
        if self.first and text[:1] not in self.first:
            return None
        if self.when is not None and not self.when(line):
            return None
        marks = _CHECKED_MARKERS[self.kind]
        if marks:
            for m in marks:
                if m in text:
                    break
            else:
                return None
        if self.on_stripped:
            text = text.strip()
        return self.pattern.search(text) if self.search else self.pattern.match(text)


TB_START = recache.compile(r"^(?P<lead>.*?)Traceback \(most recent call last\):\s*$")
FRAME = recache.compile(r'^\s*File "(?P<file>[^"]+)", line (?P<line>\d+), in (?P<func>.*?)\s*$')
USER_CODE = recache.compile(r"^\s*from user code:\s*$")
# A traceback's first frame line whose head the reporter replaced by dots, prose before it (`the error is
# .......diffusers/models/x.py", line 519, in forward`): the path's tail, its line and function are intact.
FRAME_ELIDED = recache.compile(
    r'^(?:.*?\s)?(?:\.{3,}|\u2026)(?P<file>[^\s"]+\.py)", line (?P<line>\d+), in (?P<func>[\w<>.]+)\s*$')
# A frame line a terminal or viewer wrapped at its width: `File "/p/convert_frame.py", li` (the rest, `ne 715, in
# compile_inner`, on the next line without the line prefix), or cut inside the path. Tried after FRAME.
FRAME_CUT = recache.compile(r'^\s*File "[^"]*(?:"(?:,[ \w,]*)?)?$')
# The traceback header cut the same way (`Traceback (most recent call last)`, its `:` on the next line).
TB_START_CUT = recache.compile(
    r"^(?P<lead>.*?)Traceback \("
    + "".join(f"(?:{re.escape(c)}" for c in "most recent call last)") + ")?" * len("most recent call last)") + "$")
# IPython / Jupyter tracebacks (Colab pastes): a header naming the type, frames as `File PATH:LINE, in
# QUALNAME(ARGS)` or `Cell In[5], line 3`, each followed by numbered source lines, `-->` at the one running.
_IPY_HEADER = recache.compile(r"^\s*(?P<lead>)(?P<type>[A-Za-z_][\w.]*)\s+Traceback \(most recent call last\)\s*$")
# IPython before 8.0 (Colab, old notebooks): `~/lib/python3.7/site-packages/torch/x.py in f(self, gm)`, the
# line number only on the `-->` source line under it; a cell's own code is `in <cell line: 15>()` (IPython 7.x).
IPY_OLD_FRAME = recache.compile(r"^(?P<file>(?:~|/|[A-Za-z]:\\|<ipython-input-)\S*) in (?P<func>[\w.<>]+|<cell line: \d+>)\(")
IPY_FRAME = recache.compile(r"^(?:File (?P<file>[^\s,][^,]*?):(?P<line>\d+), in (?P<func>[^\s(]+)"
                             r"|Cell (?P<cell>In\s*\[\d*\]), line (?P<cline>\d+))")
IPY_SOURCE = recache.compile(r"^\s*(?P<arrow>-*>)?\s*(?P<n>\d+)\s(?P<src>.*)$")
# pytest's short and auto tracebacks (`--tb=short`, and the frames above the failing test's own in the
# default style) print a frame as `PATH:LINE: in FUNC`, its source line indented below; no other
# traceback printer writes `: in ` after a line number.
PYTEST_FRAME = recache.compile(r"^(?P<file>[^\s:]\S*?\.py):(?P<line>\d+): in (?P<func>[\w<>.]+)\s*$")
PCG_FAILED = recache.compile(r"^(?:Piecewise CUDA Graph failed with error: ?|Piecewise CUDA graph failed\.?)(?P<msg>.*)$")
GB_HEADER = recache.compile(
    r"^(?:Graph break(?: \((?:user stack suppressed due to duplicate graph break|details suppressed)\))?"
    r" in user code at (?P<file>.+):(?P<line>\d+)\s*$"
    r"|Graph break: (?P<msg>.*?) ?from user code at:\s*$"
    r"|Unsupported break in user code at (?P<file2>.+):(?P<line2>\d+) \(details suppressed\)"
    r"|Graph break: torch\.compile cannot properly resume from this graph break.*$)"
)
CXX_FATAL = recache.compile(
    r"^(?:terminate called after throwing an instance of '(?P<type>[^']+)'"
    r"|(?:\[[^\]]*\] )?(?P<msg>\[(?:PG \d+ )?Rank \d+\] Watchdog caught collective operation timeout: .*))$"
)
_ITEM_ADVICE = recache.compile(r"^Graph break from (?P<what>.*?), consider setting")
# the same advice's own lines, when a paste starts below its first one
_ITEM_ADVICE_REST = recache.compile(
    r"^(?:torch\._dynamo\.config\.capture_scalar_outputs = True|env TORCHDYNAMO_CAPTURE_SCALAR_OUTPUTS=\d)$")
WONT_CONVERT = recache.compile(r"^WON'T CONVERT (?P<func>\S+) (?P<file>\S+) line (?P<line>\d+)")
# The dynamo and inductor packages' names: torch._dynamo / torch._inductor, and before they moved into torch
# (2022) the standalone `torchdynamo` / `torchinductor` packages, whose messages, loggers and exception types
# are the same words under the old name (`torchdynamo hit config.cache_size_limit (64)`,
# `torchdynamo.exc.Unsupported`, logger `torchdynamo.convert_frame`).
DYNAMO_PACKAGES = ("torch._dynamo", "torch._inductor", "torchdynamo", "torchinductor")
DYNAMO_EXC_PREFIXES = tuple(f"{p}." for p in DYNAMO_PACKAGES)
RECOMPILE = recache.compile(r"(?:torch\._dynamo|torchdynamo) hit config\.(?:cache_size_limit|recompile_limit) \((?P<n>\d+)\)")
# The recompile-limit warning's body (convert_frame: `   function: 'f' (file:N)`, `   last reason: ...`,
# `To log all recompilation reasons, use TORCH_LOGS="recompiles".`) when a paste starts below its header.
RECOMPILE_BODY = recache.compile(r"^\s*function: '(?P<func>[^']+)' \((?P<file>.+?):(?P<line>\d+)\)\s*$")
# The graph_breaks logger's (2.2-2.6) entry is `Graph break in user code at F:N`, `Reason: Unsupported: MSG`,
# `User code traceback:` and the frames; a paste that starts below the first line keeps the reason.
GB_LOG_REASON = recache.compile(r"^Reason: (?:(?P<type>Unsupported|[A-Z]\w*(?:Error|Exception)): )?(?P<msg>\S.*)$")
GUARD_ERROR = recache.compile(r"^(?:\[[\d/_]+\] )?Error while creating guard:\s*$")
# dynamo's banners, printed after its exception: the exception itself may be out of view.
_BANNER = recache.compile(
    r"^(?:Set TORCH_LOGS=\"\+dynamo\" and TORCHDYNAMO_VERBOSE=\d for more information"
    r"|Set TORCHDYNAMO_VERBOSE=\d for the (?:internal|full Dynamo) stack trace"
    r"|You can suppress this exception and fall back to eager by setting:)"
)
BANNER = _BANNER  # also the trailer that ends a dynamo report (traceback.py)
# torch._dynamo.explain()'s report, printed by the user: 2.0's `Dynamo produced 12 graphs with 11 graph
# break and 24 ops` then `Break reasons:` and the numbered reasons; 2.1+'s ExplainOutput `Break Reason 1:`
# (printed once per break, so a report without breaks starts nothing).
EXPLAIN = recache.compile(r"^(?:Dynamo produced \d+ graphs ?with \d+ graph breaks?\b|Break Reason \d+:$)")
# The minifier's warning (TORCHDYNAMO_REPRO_AFTER="dynamo", repro/after_dynamo.py 2.1-2.13, debug_utils.py 2.0):
# the backend raised on the captured graph, the minifier writes its script, then the error is re-raised.
_MINIFIER = recache.compile(r"^Compiled Fx GraphModule failed\. Creating script to minify the error\.")
# A dynamo exception in a listing of local variables (pytest's `--showlocals` / `-l` long tracebacks, and
# IPython's verbose mode): `cur_exn = Unsupported('torch.* op returned non-Tensor\n  Explanation: ...')`, the
# repr of the exception eval_frame's compile_wrapper is about to re-raise, its traceback out of view. A long
# repr's `\n` escapes are split into lines by frame.py: then its first line opens, the quote closes it.
EXC_REPR_LOCAL = recache.compile(
    r"^(?:[A-Za-z_]\w* = [^=]*?, )?[A-Za-z_]\w* = (?P<type>(?:[a-z_]\w*\.)*(?:Unsupported|UserError|TorchRuntimeError"
    r"|InternalTorchDynamoError|BackendCompilerFailed|InductorError))\((?P<q>['\"])(?P<msg>.+?)(?P<end>(?P=q)\).*)?$"
)
# symbolic_convert's log of an inlining attempt that raised (TORCH_LOGS=+dynamo, all versions).
_FAILED_INLINING = recache.compile(
    r"^FAILED INLINING <code object (?P<func>[^\s>]+) at 0x[0-9a-fA-F]+, file \"(?P<file>[^\"]+)\", line (?P<line>\d+)>"
)
# guards.py's recompile log (TORCH_LOGS=recompiles): `Recompiling function f in /p.py:30`; some
# reports show the location as `(file:line)`.
_RECOMPILING = recache.compile(
    r"^Recompiling function (?P<func>[\w.<>]+) (?:in (?P<file>\S.*?):(?P<line>\d+)|\((?P<file2>\S.*?):(?P<line2>\d+)\))"
)
# dynamo's graph-break warning through Python's warnings module (2.1-2.6 `warn_once`), in warnings'
# format `FILE:LINE: UserWarning: MSG`, FILE one of dynamo's own: the run goes on, the break is real.
_GB_WARNING = recache.compile(
    r"^(?P<file>\S*?torch[/\\]_dynamo[/\\]\S+?\.py):(?P<line>\d+): UserWarning: (?P<msg>Graph break\b.*?)\s*$"
)
# The message of dynamo's TorchRuntimeError (a fake-tensor run of an op failed) pasted without its type:
# `Dynamo failed to run FX node with fake tensors: call_function ...: got RuntimeError(...)` (2.7+),
# `Failed running call_function ...` (2.1-2.6). Only dynamo's get_fake_value writes these words.
_FAKE_RUN_FAILED = recache.compile(
    r"^(?:Dynamo failed to run FX node with fake tensors: |Failed running call_(?:function|method|module) )(?P<msg>.*)$"
)
# A 2.7+ dynamo message's `Explanation:` section, its exception line not in view (a program that printed
# `str(e)`, a paste that starts inside the message); only explanations that name Dynamo (most do: "Dynamo does
# not support ...", "Dynamo developers have intentionally marked ...").
_DYNAMO_EXPLANATION = recache.compile(r"^Explanation: (?P<t>.*?\bDynamo .*)$")
# The same message's `Developer debug context:` section (2.6+'s unimplemented_v2; only dynamo writes these words),
# its exception line and explanation out of view.
_DYNAMO_DEBUG_CONTEXT = recache.compile(r"^Developer debug context: (?P<t>\S.*)$")
# One failed guard of guards.py's recompile log (TORCH_LOGS=recompiles, 2.2-2.13), its `Recompiling function`
# header out of view: `- 0/0: GUARD  # SOURCE  # FILE:LINE in FUNC (torch's frame)`; the comment names the
# user's line the guard came from (symbolic shapes' guards, and other guards with a user stack).
GUARD_FAILURE = recache.compile(
    r"^\s*- (?:\d+/\d+: )?(?P<guard>\S.*?)\s+# (?:.*\s# )?(?P<file>[^\s#()]+\.py):(?P<line>\d+) in (?P<func>[\w<>.]+)"
    r"(?: \([^()]*\))?\s*$"
)
# pytest's short test summary: `FAILED tests/test_x.py::test_y - torch._dynamo.exc.Unsupported: ...`
_PYTEST_SUMMARY = recache.compile(r"^(?:FAILED|ERROR) (?P<test>\S+) - (?P<rest>\S.*)$")
# Messages only torch.compile's stack writes, quoted anywhere in a line with their type and traceback lost: an
# application's logger printing `str(e)` (`Request failed: Error: accessing tensor output of CUDAGraphs ...`), a
# warning pasted into prose, a one-line paste. `dyn`: dynamo's own (variables/torch.py's non-Tensor result,
# 2.1-2.13; SkipFunctionVariable's builtin message, 2.5-2.13, also a `UserWarning` through warn_once);
# `cg`: cudagraph trees' storage-access error (torch/_inductor/cudagraph_trees.py, 2.1-2.13).
_COMPILE_MESSAGE = recache.compile(
    r"(?P<dyn>torch\.\* op returned non-Tensor\b|Dynamo does not know how to trace the builtin\b)"
    r"|(?P<cg>accessing tensor output of CUDAGraphs that has been overwritten by a subsequent run)"
)
EXC_LEADING = recache.compile(r"^(?P<lead>)(?P<type>(?:[a-z_]\w*\.)+_?[A-Z]\w*): (?P<msg>.*)$")
EXC_FREE = recache.compile(
    r"^(?P<lead>[^\n]{0,120}?: )?"
    r"(?P<type>(?:[a-z_][\w]*\.)+_?[A-Z]\w*|(?:[A-Z]\w*)?(?:Error|Exception|Unsupported|BackendCompilerFailed))"
    r"(?::(?: (?P<msg>.*))?)?\s*$"
)
_ANY = recache.compile(r"^(?P<msg>\S.*)$")


# Errors torch's compile loggers print that are not a failure of the compile.
BENIGN_TORCH_LOG = ("Unexpected exception logging compilation metrics",)


# dynamo's loggers whose every WARNING is a compile finding of a run that goes on, besides convert_frame's
# (the failure suppress_errors swallowed, a traceback: torch-log's): exc (2.7+'s graph break after a backend
# or fake-tensor failure: `Backend compiler exception`, its explanation, the failing FX node and graph),
# higher_order_ops (speculate_subgraph could not trace a HOP body or an autograd.Function and falls back to
# eager). By logger name (Python logging, torch 2.0-2.2's format) or by the file a glog line names.
FINDING_LOGGERS = ("torch._dynamo.exc", "torch._dynamo.variables.higher_order_ops")
FINDING_LOG_FILES = tuple(n.replace(".", "/") + ".py" for n in FINDING_LOGGERS)


# The file a glog prefix names, when it is one of inductor's (`[rank0]:E0422 ... torch/_inductor/runtime/
# triton_heuristics.py:780] [0/0] ...`, a Windows `Lib\\site-packages\\torch\\_inductor\\...`).
_COMPILE_LOG_FILE = recache.compile(r"(?:^|[/\\])torch[/\\]_inductor[/\\]")


def _torch_compile_logger(line: LogLine) -> bool:
    """An ERROR/CRITICAL record of a torch._dynamo / torch._inductor logger, or a warning of
    convert_frame (where suppress_errors logs the failure it swallowed), in Python logging's format."""
    lg = line.logger or ""
    if line.level in ("ERROR", "CRITICAL"):
        ok = lg.startswith(DYNAMO_PACKAGES)
    elif line.level != "WARNING":
        ok = False
    elif lg in ("torch._dynamo.convert_frame", "torchdynamo.convert_frame"):
        ok = True
    else:
        # dynamo's warning of what it is about to reject (2.0-2.2 utils.wrap_fake_exception: `Unsupported: {reason}
        # with fake tensor propagation.`, then it raises Unsupported): named, or by the file a glog line names
        ok = line.text.startswith("Unsupported: ") and (
            lg.startswith(("torch._dynamo", "torchdynamo")) or "torch/_dynamo/" in (line.logged_at or "").replace("\\", "/"))
    return ok and not line.text.startswith(BENIGN_TORCH_LOG)


def _torch_compile_glog_error(line: LogLine) -> bool:
    """An ERROR/CRITICAL glog line (torch's own log format) that a torch._inductor file wrote: inductor logs
    them as a compile fails (triton_heuristics' `Triton compilation failed` and the kernel's source)."""
    return line.level in ("ERROR", "CRITICAL") and line.logger is None and line.logged_at is not None and \
        _COMPILE_LOG_FILE.search(line.logged_at) is not None and not line.text.lstrip().startswith(BENIGN_TORCH_LOG)


def _inductor_error_log(line: LogLine) -> bool:
    """An ERROR record of a torch._inductor logger: named (Python logging) or by the file a glog line names."""
    if line.logger:
        return line.level in ("ERROR", "CRITICAL") and line.logger.startswith(("torch._inductor", "torchinductor"))
    return _torch_compile_glog_error(line)


def _finding_logger(line: LogLine) -> bool:
    """A WARNING of one of FINDING_LOGGERS, named (Python logging, torch 2.0-2.2's format) or by the file
    a glog line names; any line of the record, since a paste may start inside it."""
    if line.level != "WARNING":
        return False
    if line.logger:
        return line.logger in FINDING_LOGGERS
    return (line.logged_at or "").replace("\\", "/").endswith(FINDING_LOG_FILES)


# Python's warnings module's own format, `FILE:LINE: UserWarning: MSG`: dynamo's warn_once prints its message so
# just before it raises or breaks the graph with the same words, and that report (frames, `from user code:`) says
# more; only a bare copy of the message (pasted into prose, the file lost) is all there is.
# (searched: a terminal may have wrapped the file's path onto the line before)
_WARNINGS_MODULE_LINE = recache.compile(r"\.py:\d+: \w*Warning: ")


def _not_warnings_module_line(line: LogLine) -> bool:
    return _WARNINGS_MODULE_LINE.search(line.text) is None


def _exception_line(line: LogLine) -> bool:
    return ":" in line.text and not line.text[:1].isspace()


# In the order they are tried: the first rule that matches and whose opener takes the line wins.
RULES: tuple[Rule, ...] = (
    Rule("traceback", (b"Traceback",), TB_START),
    # a traceback whose head was cut off. Its marker is `File ` and not `File "`: a paste that went through
    # smart quotes holds `File “` (frame.py turns it back), and this one marker also covers the IPython
    # frames' `File /`, `File ~`, `File <` (one marker instead of four: each marker the native locator
    # holds costs its filter)
    Rule("frame", (b"File ",), FRAME, first=" \tF"),
    Rule("frame-cut", (b"File ",), FRAME_CUT, first=" \tF"),  # ... whose first frame line was wrapped
    Rule("frame-elided", (b'", line ',), FRAME_ELIDED),  # ... whose first frame's head was elided
    Rule("ipython-header", (b"Traceback",), _IPY_HEADER),  # before "frame": its frames look alike
    # a traceback whose header was wrapped (after ipython-header: IPython's has no colon)
    Rule("traceback-cut", (b"Traceback",), TB_START_CUT),
    Rule("ipython-frame", (b"File /", b"File ~", b"File <", b"Cell In"), IPY_FRAME, first="FC"),
    Rule("pytest-frame", (b": in ",), PYTEST_FRAME),
    Rule("call-stack", (b"This call originates from:",), recache.compile(r"^This call originates from:")),
    Rule("user-code", (b"from user code:",), USER_CODE),
    Rule("pcg-failed", (b"Piecewise CUDA ",), PCG_FAILED, first="P"),  # both capitalisations of "Graph"
    Rule("graph-break", (b"Graph break", b"Unsupported"), GB_HEADER, first="GUE"),
    Rule("cxx-fatal", (b"terminate called", b"Watchdog caught"), CXX_FATAL, first="t["),
    Rule("item-advice", (b"Graph break",), _ITEM_ADVICE, first="G"),  # `.item()` advice before a graph break
    Rule("item-advice-rest", (b"capture_scalar_outputs", b"CAPTURE_SCALAR_OUTPUTS"), _ITEM_ADVICE_REST,
         first=" \tte", on_stripped=True),
    # `T CONVERT`: also `WON’T CONVERT` in a paste that went through smart quotes (frame.py turns it back)
    Rule("wont-convert", (b"T CONVERT",), WONT_CONVERT, first="W"),
    Rule("recompile-limit", (b"_dynamo hit config", b"torchdynamo hit config"), RECOMPILE, search=True),
    Rule("guard-error", (b"Error",), GUARD_ERROR, on_stripped=True),
    Rule("recompile-body", (b"function: '",), RECOMPILE_BODY),
    Rule("graph-break-reason", (b"Reason: ",), GB_LOG_REASON, first="R", when=lambda line: line.artifact == "graph_breaks"),
    Rule("banner", (b"TORCHDYNAMO_VERBOSE", b"You can suppress this exception"), _BANNER, first="SY"),
    Rule("failed-inlining", (b"FAILED INLINING",), _FAILED_INLINING, first="F"),
    # its markers hold the exception rule's (`Unsupported`, `Error`, `BackendCompilerFailed`): no slots of its own
    Rule("exception-repr", (b"Unsupported(", b"Error(", b"BackendCompilerFailed("), EXC_REPR_LOCAL, covered_by="exception"),
    Rule("minifier", (b"Compiled Fx GraphModule failed",), _MINIFIER, first="C"),
    # `Dynamo ` is also the marker of the rules below that name Dynamo: one slot of the native locator's 64
    Rule("explain", (b"Dynamo ", b"Break Reason "), EXPLAIN, first=" DB", on_stripped=True),
    Rule("recompiling", (b"Recompiling function",), _RECOMPILING, first="R"),
    Rule("guard-failure", (b"__recompiles",), GUARD_FAILURE, first=" \t-", in_prefix=True,
         when=lambda line: line.artifact == "recompiles"),
    Rule("fake-run-failed", (b"Dynamo ", b"Failed running call_"), _FAKE_RUN_FAILED, first="DF"),
    Rule("graph-break-warning", (b": UserWarning: Graph break",), _GB_WARNING),
    Rule("dynamo-explanation", (b"Dynamo ",), _DYNAMO_EXPLANATION, first=" \tE", on_stripped=True),
    Rule("dynamo-debug-context", (b"Developer debug context: ",), _DYNAMO_DEBUG_CONTEXT, first=" \tD", on_stripped=True),
    # The summary's exception part holds one of the exception rule's markers (a type ending in Error,
    # Exception or Unsupported, or a dotted name, which the prefilter finds without a marker).
    Rule("pytest-summary", (b"FAILED ", b"ERROR "), _PYTEST_SUMMARY, first="FE", covered_by="exception"),
    # inductor's scheduler logs this (CRITICAL) just before it raises, in any log format
    Rule("codegen-error", (b"Error in codegen for ",), recache.compile(r"^Error in codegen for (?P<msg>.*)$"), first="E"),
    # inductor's log of a Triton kernel that did not compile (runtime/triton_heuristics.py's log.exception,
    # 2.4-2.13: the kernel's name, its source, its metadata, then the traceback), just before it raises
    Rule("triton-compile-failed", (b"Triton compilation failed",),
         recache.compile(r"^Triton compilation failed: (?P<msg>.*)$"), first="T", when=_inductor_error_log),
    # Python logging's default format, and torch 2.0-2.2's own (`[2023-03-20 07:29:05,653]
    # torch._inductor.graph: [ERROR] Error from lowering`)
    Rule("torch-log", (b"ERROR:torch._", b"CRITICAL:torch._", b"WARNING:torch._dynamo.convert_frame:",
                       b": [ERROR]", b": [CRITICAL]", b"torch._dynamo.convert_frame: [WARNING]", b"torchdynamo.convert_frame: [WARNING]"), _ANY,
         when=_torch_compile_logger, in_prefix=True),
    # the same in torch's glog format: its markers are the file in the prefix (the level is one letter, no marker
    # can say it); stripped, since every line of a multi-line record carries the prefix, its text indented
    # (the kernel source under `Triton compilation failed`)
    # (inductor's files only: dynamo's ERROR glog records include metrics_context's benign multi-line one, whose
    # continuation lines do not carry its first line's words)
    Rule("torch-glog", (b"torch/_inductor/", b"torch\\_inductor\\"), _ANY,
         when=_torch_compile_glog_error, in_prefix=True, on_stripped=True),
    # A WARNING of FINDING_LOGGERS. Its markers are broad, so that the native locator's 128 slots still hold
    # every marker (more would push the fact rules to broader triggers): each such line names
    # `torch._dynamo.exc`, `exc.py:` or `higher_order_ops` in its prefix.
    Rule("finding-log", (b"_dynamo.exc", b"_dynamo/exc.py", b"higher_order_ops"), _ANY,
         when=_finding_logger, in_prefix=True, on_stripped=True),
    # `pkg.Type: message` / `SomethingError: message`; its markers are the exception names' endings
    # (and dotted names, which the prefilter finds without a marker).
    Rule("exception", (b"Error", b"Exception", b"Unsupported", b"BackendCompilerFailed", b"."), EXC_FREE,
         when=_exception_line),
    # after the exception rule: a quoted message whose exception line is in view is that exception's
    Rule("compile-message", (b"op returned non-Tensor", b"Dynamo ", b"output of CUDAGraphs"), _COMPILE_MESSAGE,
         search=True, when=_not_warnings_module_line),
)

# A rule's markers as text, for its own cheap test (the exception rule's "." stands for dotted names).
_TEXT_MARKERS: dict[str, tuple[str, ...]] = {r.kind: tuple(m.decode() for m in r.markers) for r in RULES}
# The markers a rule's own test checks: none where they are in the prefix, or stand for any dotted name.
_CHECKED_MARKERS: dict[str, tuple[str, ...]] = {
    r.kind: () if r.in_prefix or "." in _TEXT_MARKERS[r.kind] else _TEXT_MARKERS[r.kind] for r in RULES
}

# What the prefilter must keep: every rule's markers (b"." is covered by its dotted-name test).
RECORD_START_MARKERS: tuple[bytes, ...] = tuple(
    dict.fromkeys(m for r in RULES if r.covered_by is None for m in r.markers if m != b".")
)


def exception_match(text: str) -> re.Match[str] | None:
    """`torch._dynamo.exc.Unsupported: msg` (the leading dotted type) or any exception-looking line."""
    return EXC_LEADING.match(text) or EXC_FREE.match(text)


@dataclass(frozen=True, slots=True)
class MachineryFrame:
    """A frame only torch.compile runs: `path` in the file, and the function / source line, if given."""

    path: str
    function: str | None = None
    source: str | None = None

    def holds(self, f: Frame) -> bool:
        p = f.file.replace("\\", "/")
        if "/torchdynamo/" in p or "/torchinductor/" in p:
            # the 2022 standalone packages: the same modules, before they moved into torch
            p = p.replace("/torchdynamo/", "/torch/_dynamo/").replace("/torchinductor/", "/torch/_inductor/")
        if self.path not in p:
            return False
        # IPython prints qualified names (`_compile.<locals>.compile_inner`, `ConvertFrame.__call__`)
        if self.function is not None and f.function.rsplit(".", 1)[-1] != self.function:
            return False
        return self.source is None or (f.source or "").startswith(self.source)


COMPILE_MACHINERY: tuple[MachineryFrame, ...] = (
    # convert_frame runs when dynamo converts a frame, never when compiled code runs (_compile, ...)
    MachineryFrame("torch/_dynamo/convert_frame.py"),
    MachineryFrame("torch/_dynamo/symbolic_convert.py"),
    MachineryFrame("torch/_dynamo/variables/"),
    MachineryFrame("torch/_dynamo/polyfills", "getattr_and_trace"),
    # torch.compile() itself and the dynamo.optimize it calls run once, when the user wraps the model (its
    # checks of the interpreter, the platform, the backend), never when the compiled code runs
    MachineryFrame("torch/__init__.py", "compile"),
    MachineryFrame("torch/_dynamo/eval_frame.py", "optimize"),
    MachineryFrame("torch/_dynamo/eval_frame.py", "_optimize"),
    # the fake-tensor run of each traced op (all releases): only tracing calls these
    *(MachineryFrame("torch/_dynamo/utils.py", fn) for fn in ("get_fake_value", "run_node", "wrap_fake_exception")),
    MachineryFrame("torch/_dynamo/output_graph.py", "call_user_compiler"),
    # the wrappers dynamo calls the backend through, with the captured graph (compile only, 2.1-2.13):
    # the minifier's WrapBackendDebug, and torch.compile's backend wrappers (inductor's, a named backend's)
    MachineryFrame("torch/_dynamo/repro/after_dynamo.py", "__call__"),
    MachineryFrame("torch/__init__.py", "__call__", "return compile_fx("),
    MachineryFrame("torch/__init__.py", "__call__", "return self.compiler_fn("),
    MachineryFrame("torch/_dynamo/output_graph.py", "_call_user_compiler"),
    # compile_wrapper also runs every call of the compiled code (2.8+): only its re-raise of a
    # compile error is evidence.
    MachineryFrame("torch/_dynamo/eval_frame.py", "compile_wrapper", "raise e.with_traceback("),
    MachineryFrame("torch/_inductor/compile_fx.py", None, "raise InductorError("),
    # ahead-of-time compile (not in 2.7, in 2.13; vLLM's aot_compile path): eval_frame's `aot_compile` and
    # aot_compile.py's fullgraph/module compile; the loaded artifact's `__call__` is a run, not a compile
    MachineryFrame("torch/_dynamo/eval_frame.py", "aot_compile"),
    MachineryFrame("torch/_dynamo/aot_compile.py", "aot_compile_fullgraph"),
    MachineryFrame("torch/_dynamo/aot_compile.py", "aot_compile_module"),
    # inductor's compile of a captured graph (compile_fx_inner -> fx_codegen_and_compile -> graph
    # lowering -> codegen -> loading the generated module), all releases 2.0 to 2.13. compile_fx.py
    # also holds wrappers that run every call (cudagraphify's `run`), so only its compile steps count.
    *(MachineryFrame("torch/_inductor/compile_fx.py", fn) for fn in (
        "compile_fx_inner", "_compile_fx_inner", "fx_codegen_and_compile", "codegen_and_compile")),
    # the backend entry dynamo calls with the captured graph (inductor's compile_fx, AOTAutograd's
    # backend wrapper and its compile of the joint graph): compile only, all releases 2.0 to 2.13
    MachineryFrame("torch/_inductor/compile_fx.py", "compile_fx"),
    MachineryFrame("torch/_dynamo/backends/common.py", "__call__"),
    *(MachineryFrame("torch/_functorch/aot_autograd.py", fn) for fn in (
        "aot_module_simplified", "create_aot_dispatcher_function", "_create_aot_dispatcher_function")),
    MachineryFrame("torch/_inductor/graph.py"),  # GraphLowering: the lowering interpreter, compile only
    MachineryFrame("torch/_inductor/lowering.py"),
    MachineryFrame("torch/_inductor/scheduler.py"),
    MachineryFrame("torch/_inductor/codegen/"),
    MachineryFrame("torch/_inductor/codecache.py", "load_by_key_path"),  # the generated module's import
    # inductor's C++ toolchain (finding the compiler, the CPU ISA check, building generated C++): only a
    # compile (or AOT package) of generated code runs them, cpp_builder 2.4-2.13, cpu_vec_isa 2.5-2.13
    MachineryFrame("torch/_inductor/cpp_builder.py"),
    MachineryFrame("torch/_inductor/cpu_vec_isa.py"),
    # AOTAutograd's compile of the joint / forward graph (2.0-2.1's one aot_autograd.py; 2.2+'s
    # jit_compile_runtime_wrappers / dispatch_and_compile_graph, 2.13's graph_capture) and the forward /
    # backward compilers compile_fx hands it: each runs once per graph, never on a call of the compiled code
    # (the runtime wrappers are other functions of the same files)
    *(MachineryFrame("torch/_functorch/aot_autograd.py", fn) for fn in (
        "aot_dispatch_autograd", "aot_dispatch_base", "aot_dispatch_autograd_graph", "aot_dispatch_base_graph",
        "aot_wrapper_dedupe", "aot_wrapper_synthetic_base")),
    *(MachineryFrame("torch/_functorch/_aot_autograd/jit_compile_runtime_wrappers.py", fn) for fn in (
        "aot_dispatch_autograd", "aot_dispatch_base")),
    MachineryFrame("torch/_functorch/_aot_autograd/dispatch_and_compile_graph.py"),
    MachineryFrame("torch/_functorch/_aot_autograd/graph_capture.py"),
    *(MachineryFrame("torch/_inductor/compile_fx.py", fn) for fn in (
        "fw_compiler_base", "_fw_compiler_base", "bw_compiler", "fw_compiler_freezing")),
    # inductor's compile-worker pool: its initializer (2.0-2.2 codecache's nested `init`, 2.3+
    # compile_worker's `_async_compile_initializer`) runs only in a worker started to compile kernels
    MachineryFrame("torch/_inductor/codecache.py", "init", "_watchdog_thread"),
    MachineryFrame("torch/_inductor/compile_worker/"),
    # a server's own torch.compile backend, which dynamo calls with the captured graph: vLLM's VllmBackend
    # splits the graph and compiles each piece (PiecewiseCompileInterpreter, CompilerManager), 0.6 to 0.20;
    # backends.py's `__call__` is also 0.6-0.7's PiecewiseBackend run per call, so only VllmBackend's counts
    *(MachineryFrame("vllm/compilation/backends.py", fn) for fn in ("run", "call_module", "split_graph", "compile")),
    MachineryFrame("vllm/compilation/backends.py", "__call__", "PiecewiseCompileInterpreter("),
    # torchair (torch_npu's torch.compile backend for Ascend NPUs): the compiler's conversion of the captured
    # graph; its _GmRunner / _CompiledFxGraph `__call__` are the runs of the compiled graph
    *(MachineryFrame("torchair/npu_fx_compiler.py", fn) for fn in ("_get_compiled_gm", "_gen_compiled_gm")),
)


# Frames that run only code torch.compile produced: the compiled graph of a dynamo frame being called. A traceback
# whose exception is out of view and that shows one failed in a compiled graph's run (a Triton kernel, a CUDA
# error, an op of the captured graph): not a compile failure, but torch.compile's, and what helps differs from an
# eager crash's. Not COMPILE_MACHINERY (they say nothing of a compile), and not evidence where an exception is in
# view (a CUDA OOM or an IndexError inside a compiled graph is that error). Only torch's own frames: a server's or
# an app's runtime of compiled pieces (vllm/compilation's caching.py / backends.py, ComfyUI's compile wrapper)
# without a dynamo or inductor frame is not dynamo evidence (samples/pastes-heldout2 case 029 is labelled so).
COMPILED_RUN: tuple[MachineryFrame, ...] = (
    MachineryFrame("torch/_inductor/output_code.py", "__call__"),  # inductor's compiled module (2.6-2.13)
)
# eval_frame's `_fn` is the disable() wrapper dynamo puts around every compiled graph it calls (and around any
# function torch._dynamo.disable wraps): a run of a compiled graph where what it calls is an fx GraphModule
# (`call_wrapped`, `__call__`), or where the frame above it is one executing dynamo's transformed bytecode, whose
# line is the function's `def` (the bytecode that calls the graph has no other line of its own).
_EVAL_FN = MachineryFrame("torch/_dynamo/eval_frame.py", "_fn")
_GRAPH_MODULE = MachineryFrame("torch/fx/graph_module.py")
_DEF_LINE = recache.compile(r"^\s*(?:async\s+)?def\s+\w+\s*\(")


def is_compiled_run(frames: tuple[Frame, ...] | list[Frame]) -> bool:
    """A traceback (frames outermost first) through a run of code torch.compile produced (COMPILED_RUN)."""
    for i, f in enumerate(frames):
        if any(m.holds(f) for m in COMPILED_RUN):
            return True
        if _EVAL_FN.holds(f):
            if any(_GRAPH_MODULE.holds(g) for g in frames[i + 1:]):
                return True
            if i > 0 and _DEF_LINE.match(frames[i - 1].source or "") is not None:
                return True
    return False


# Servers re-raise a worker's crash with a message that only points at it: that exception is the
# crash printed before it, not another one (vLLM's engine core and multiproc executor).
POINTS_ELSEWHERE = recache.compile(
    r"See root cause above|stack trace above for the root cause|See stack trace \(above\) for the root cause"
)


def points_elsewhere(message: str) -> bool:
    return POINTS_ELSEWHERE.search(message) is not None


def is_compile_machinery(f: Frame) -> bool:
    return any(m.holds(f) for m in COMPILE_MACHINERY)


# Frames of code torch.compile made, which say a traceback whose exception is out of view is torch.compile's:
# dynamo's resume functions (`<resume in f>`, resume_execution.py: the rest of a frame after a graph break,
# compiled in turn), and the input checks of the module inductor generated (`torchinductor_<user>/xx/c<hash>.py`,
# `assert_size_stride(` / `assert_alignment(`: the compiled graph got inputs it was not compiled for). Not
# COMPILE_MACHINERY: they also run when compiled code runs, so they are evidence only where no exception is in view.
_GENERATED_MODULE = recache.compile(r"torchinductor_[^/\\]+[/\\]\w+[/\\]c\w+\.py$")
_GENERATED_CHECKS = ("assert_size_stride(", "assert_alignment(")


def is_compiled_code(f: Frame) -> bool:
    if f.function.startswith("<resume in "):
        return True
    return (f.source or "").lstrip().startswith(_GENERATED_CHECKS) and _GENERATED_MODULE.search(f.file) is not None


# One scan for every rule's text markers: most lines of a log are evidence of nothing, and this says so
# at C speed, and names the few rules worth testing. The rules without markers of their own in the text
# (the exception rule's "." stands for dotted names; torch-log's markers are in the prefix) are always
# tested, after their cheap `when`.
_MARKS = tuple(dict.fromkeys(m for r in RULES if not r.in_prefix for m in _TEXT_MARKERS[r.kind] if m != "."))
_ANY_MARKER = recache.compile("|".join(re.escape(m) for m in _MARKS))
_BY_MARKER: dict[str, frozenset[int]] = {
    m: frozenset(i for i, r in enumerate(RULES) if m in _TEXT_MARKERS[r.kind]) for m in _MARKS
}
_ALWAYS = frozenset(i for i, r in enumerate(RULES) if r.in_prefix or "." in _TEXT_MARKERS[r.kind])


def may_be_evidence(line: LogLine) -> bool:
    """False when no rule can take this line (a quick test before `first_evidence`)."""
    return line.logger is not None or line.logged_at is not None or ":" in line.text or \
        _ANY_MARKER.search(line.text) is not None


_ALWAYS_RULES = tuple(RULES[i] for i in sorted(_ALWAYS))
_ALWAYS_TEXT_RULES = tuple(r for r in _ALWAYS_RULES if not r.in_prefix)  # a line without a logger or glog file


def candidates(line: LogLine) -> tuple[Rule, ...]:
    """The rules that may take this line, in priority order: most lines hold no marker, and only the
    rules without markers of their own need a look (one regex search says which case it is)."""
    text = line.text
    if _ANY_MARKER.search(text) is None:
        return _ALWAYS_RULES if line.logger is not None or line.logged_at is not None else _ALWAYS_TEXT_RULES
    idx = set(_ALWAYS)
    for m in _MARKS:
        if m in text:
            idx |= _BY_MARKER[m]
    return tuple(RULES[i] for i in sorted(idx))


def first_evidence(line: LogLine) -> tuple[Rule, re.Match[str]] | None:
    """The first rule this line is evidence for (a later rule may still apply if its opener declines)."""
    if not may_be_evidence(line):
        return None
    for rule in candidates(line):
        m = rule.test(line)
        if m is not None:
            return rule, m
    return None
