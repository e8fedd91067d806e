"""Text lines in, LogLines out: ANSI and control characters stripped, server/torch log prefixes parsed off."""

from __future__ import annotations

import re
from collections.abc import Iterable, Iterator

from . import recache
from .records import LogLine

# Log text is untrusted and ends up on a terminal: every escape sequence (colours, cursor moves, screen
# clears, OSC 8 hyperlinks, window titles), every other C0/C1 control, line/paragraph separators and bidi
# overrides are removed here, once, so no later stage or renderer ever sees one. Tab and newline are kept
# (lines arrive already split, so a newline never reaches a LogLine from a log).
_ANSI = recache.compile(
    r"(?:\x1b\]|\x9d)[^\x07\x1b\x9c]*(?:\x07|\x1b\\|\x9c)?"  # OSC ... BEL/ST (7- and 8-bit)
    r"|(?:\x1b\[|\x9b)[0-9;:?<=>]*[ -/]*[@-~]"  # CSI (7- and 8-bit)
    r"|\x1b[@-Z\\-_]"  # two-byte escapes
    r"|[\x00-\x08\x0b-\x1f\x7f-\x9f\u2028\u2029\u200e\u200f\u202a-\u202e\u2066-\u2069]"  # other controls
)
_NEEDS_STRIP = recache.compile(r"[\x00-\x08\x0b-\x1f\x7f-\x9f\u2028\u2029\u200e\u200f\u202a-\u202e\u2066-\u2069]")

# Each prefix is tried in turn, repeatedly, so stacked prefixes (docker timestamp, Ray tag, vLLM tag,
# vLLM level, torch.distributed rank, glog) all come off.
_DOCKER_TS = recache.compile(r"\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d(?:[.,]\d+)?(?:Z|[+-]\d\d:?\d\d)? ")
_VIEWER_PIPE = recache.compile(r" {0,4}\| ")
# A colour escape whose ESC byte a paste lost (`\x1b[36m(Actor pid=1)\x1b[0m` pasted as
# ` [36m(Actor pid=1) [0m`): the SGR remnant, `[` digits/semicolons `m`, next to a prefix.
_SGR_REMNANT = recache.compile(r" ?\[[0-9;]{0,16}m")
# docker compose (`sglang-1  | `, v1 `sglang_1  | `) and `kubectl logs --prefix` (`[pod/name/container] `)
_COMPOSE = recache.compile(r"[A-Za-z0-9][\w.-]*[-_]\d+ +\| ")
_KUBECTL = recache.compile(r"\[pod/[^\]\s]+\] ")
# pytest shows an exception's lines as `E       <line>` (E, then indentation to column 8)
_PYTEST_E = recache.compile(r"E(?: {7}|$)")
_RAY = recache.compile(r"\((?P<proc>[^()]*?), rank=(?P<rank>\d+), pid=\d+(?:, ip=[\w.:]+)?\) ")
# A Ray actor without a rank: `(RayWorkerWrapper pid=1990, ip=192.168.23.10) `; its pid tells the workers apart.
_RAY_ACTOR = recache.compile(r"\((?P<proc>[A-Za-z_][\w.:-]*) pid=(?P<pid>\d+), ip=[\w.:]+\) ")
# MPI launchers: `srun -l` / `mpirun -l` write `0: `, Open MPI's --tag-output `[1,0]<stderr>:`.
_MPI = recache.compile(r"(?:(?P<rank>\d{1,4}): |\[\d+,(?P<rank2>\d+)\]<std(?:out|err)>: ?)")
# A markdown quote, as bug reports paste logs into replies: `> ` (nested: `> > `).
_QUOTE = recache.compile(r">(?: |$)")
# Python logging's default format: `CRITICAL:torch._inductor.scheduler:Error in codegen ...`.
_PYLOGGING = recache.compile(r"(?P<level>DEBUG|INFO|WARNING|ERROR|CRITICAL):(?P<logger>[A-Za-z_][\w.]*):")
_VLLM_TAG = recache.compile(r" ?\((?P<proc>[A-Za-z][\w ]*?(?: rank=\d+)?|[A-Za-z][\w]*) pid=\d+\) ?")
_VLLM_LEVEL = recache.compile(
    r"(?P<level>DEBUG|INFO|WARNING|WARN|ERROR|CRITICAL) \d\d-\d\d \d\d:\d\d:\d\d(?:\.\d+)? "
    r"(?:\[[^\]]+?:\d+\] ?|[\w.]+:\d+\] ?)"
)
_SGLANG = recache.compile(
    r"\[\d{4}-\d\d-\d\d \d\d:\d\d:\d\d(?:[.,]\d{1,6})?(?P<ranks>(?: (?:DP|PP|ATTN_CP|ATTN_DP|MOE_DP|CP|TP|EP)\d+)*)\] ?"
)
_TORCH_RANK = recache.compile(r"\[rank(?P<rank>\d+)\]: ?")  # torchrun: `[rank0]: Traceback ...`, glog: `[rank4]:E0317 ...`
_GLOG = recache.compile(
    r"(?P<level>[VIWEC])\d{4} \d\d:\d\d:\d\d\.\d+ +\d+ [^\s\]]+:\d+\](?: |$)"
    r"(?:\[[\d/_]+\] )?(?:\[__(?P<artifact>\w+)\] ?)?"
)
_PYLOG_OLD = recache.compile(  # torch 2.1-2.2 graph-break logger
    r"\[\d{4}-\d\d-\d\d \d\d:\d\d:\d\d,\d+\] (?:\[[\d/_]+\] )?(?P<name>[\w.]+?)(?:\.__(?P<artifact>\w+))?: "
    r"\[(?P<level>[A-Z]+)\] ?"
)

_GLOG_LEVELS = {"V": "DEBUG", "I": "INFO", "W": "WARNING", "E": "ERROR", "C": "CRITICAL"}


def strip_controls(text: str) -> str:
    """The text a person should see: escape sequences and control characters removed (tab kept)."""
    if _NEEDS_STRIP.search(text) is None:
        return text
    return _ANSI.sub("", text)


_BAR = recache.compile(r"\| ")
_ALNUM = "0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz"

# Every prefix a log line can carry, in the order they are tried: (characters a line must start with
# for the prefix to be possible, its pattern, what it tells). A line sheds prefixes until none matches,
# so stacked ones (docker time, Ray tag, vLLM tag, vLLM level, torch rank, glog) all come off.
# torch 2.1-2.2's logger (`[date time,ms] [0/0] name: [LEVEL]`) comes before SGLang's bracket, which
# would half-match it.
_PREFIXES: tuple[tuple[str, re.Pattern[str], str], ...] = (
    ("0123456789", _DOCKER_TS, "wrapper"),
    (" [", _SGR_REMNANT, "wrapper"),
    (_ALNUM, _COMPOSE, "wrapper"),
    ("E", _PYTEST_E, "pytest"),
    (">", _QUOTE, "wrapper"),
    ("0123456789[", _MPI, "mpi"),
    (" (", _RAY, "ray"),
    ("(", _RAY_ACTOR, "ray-actor"),
    (" (", _VLLM_TAG, "process"),
    (" ", _VIEWER_PIPE, "wrapper"),
    ("DIWEC", _VLLM_LEVEL, "level"),
    ("DIWEC", _PYLOGGING, "pylogging"),
    ("VIWEC", _GLOG, "glog"),
    ("[", _KUBECTL, "wrapper"),
    ("[", _PYLOG_OLD, "pylog"),
    ("[", _SGLANG, "sglang"),
    ("[", _TORCH_RANK, "torch-rank"),
    ("|", _BAR, "wrapper"),
)


def _next_prefix(text: str) -> tuple[str, re.Match[str]] | None:
    """The prefix the line starts with, if any: (what it is, its match)."""
    c0 = text[0]
    for first, pattern, what in _PREFIXES:
        if c0 in first:
            m = pattern.match(text)
            if m is not None:
                return what, m
    return None


def frame_line(source: str, lineno: int, raw: str) -> LogLine:
    text = strip_controls(raw)
    rank: str | None = None
    level: str | None = None
    artifact: str | None = None
    logger: str | None = None
    prefixed = record_start = False
    while text:
        got = _next_prefix(text)
        if got is None:
            break
        what, m = got
        text = text[m.end() :]
        if what == "wrapper":
            continue
        if what == "pytest":
            level = level or "ERROR"
            continue
        prefixed = True
        if what in ("ray", "torch-rank"):
            rank = rank or f"rank{m.group('rank')}"
        elif what == "mpi":
            rank = rank or f"rank{m.group('rank') or m.group('rank2')}"
        elif what == "ray-actor":
            rank = f"{m.group('proc')} pid={m.group('pid')}"
        elif what == "pylogging":
            level = m.group("level")
            logger = m.group("logger")
            record_start = True  # logging prefixes a record's first line only
        elif what == "process":
            rank = m.group("proc").strip()
        elif what == "level":
            level = m.group("level")
        elif what in ("glog", "pylog"):
            level = _GLOG_LEVELS.get(m.group("level"), m.group("level"))
            artifact = m.group("artifact") or artifact
            if what == "pylog":  # torch 2.0-2.2's format names its logger: `torch._inductor.graph: [ERROR]`
                logger = m.group("name")
        elif what == "sglang":
            rank = m.group("ranks").strip() or rank
            record_start = True
    return LogLine(source, lineno, text, rank, prefixed, level, artifact, record_start, logger)


def frame_lines(source: str, lines: Iterable[str], start: int = 1) -> Iterator[LogLine]:
    for i, raw in enumerate(lines, start):
        yield from frame_physical(source, i, raw)


# A physical line shorter than this holds one logical line: a lost newline leaves a long line.
MIN_JOINED = 100
MIN_PREFIX = 8  # a shorter repeated prefix (`0: `, `> `) is too common inside text to split at
# What an escaped message holds when it is a traceback or a dynamo report worth splitting back.
_ESCAPED_EVIDENCE = ("Traceback (most recent call last):", "File ", "from user code:", "torch._dynamo",
                     "torch._inductor", "Explanation:")
_DIGIT_RUN = recache.compile(r"\d+")


def frame_physical(source: str, lineno: int, raw: str) -> list[LogLine]:
    """The logical lines one physical line holds, framed (all with the physical line's number).

    Almost always one. Bug-report pastes and log shippers sometimes lose newlines: a message logged
    with its newlines escaped (`'...\\n  Explanation: ...\\nfrom user code:\\n ...'`, a repr or JSON
    string), or lines joined where the logger's prefix repeats (`[... TP0] Traceback ... [... TP0]
    File "..."`). Both are split back into the lines they were.
    """
    first = frame_line(source, lineno, raw)
    if len(raw) < MIN_JOINED:
        return [first]
    pieces = _split_repeated_prefix(raw, first)
    if pieces is None:
        pieces = [raw]
    out: list[LogLine] = []
    for k, piece in enumerate(pieces):
        line = first if k == 0 and piece is raw else frame_line(source, lineno, piece)
        escaped = _split_escaped(line.text)
        if escaped is None:
            out.append(line)
            continue
        out.append(_with_text(line, escaped[0]))
        out.extend(frame_line(source, lineno, part) for part in escaped[1:])
    return out


def _with_text(line: LogLine, text: str) -> LogLine:
    return LogLine(line.source, line.lineno, text, line.rank, line.prefixed, line.level, line.artifact,
                   line.record_start, line.logger)


def _split_escaped(text: str) -> list[str] | None:
    """A message with its newlines escaped as `\\n`, split at them (and `\\"`, `\\'` unescaped), when it
    is a traceback or a dynamo report; None otherwise."""
    if text.count("\\n") < 2:
        return None
    parts = text.split("\\n")
    rest = "\n".join(parts[1:])
    if not any(e in rest for e in _ESCAPED_EVIDENCE):
        return None
    return [p.replace('\\"', '"').replace("\\'", "'") for p in parts]


def _split_repeated_prefix(raw: str, first: LogLine) -> list[str] | None:
    """`raw` split before each repeat of its own prefix (digits may differ: timestamps), or None. Of
    stacked prefixes (vLLM's tag, then glog's), the outermost that repeats: the inner ones may be
    only on some of the joined lines."""
    text = strip_controls(raw)
    end, rest = 0, text
    while rest:
        got = _next_prefix(rest)
        if got is None:
            break
        end += got[1].end()
        rest = rest[got[1].end():]
        prefix = text[:end]
        if end < MIN_PREFIX or not prefix.strip():
            continue
        rx = re.compile(_DIGIT_RUN.sub(lambda _m: r"\d+", re.escape(prefix)))
        cuts = [m.start() for m in rx.finditer(text, end)]
        if cuts:
            bounds = [0, *cuts, len(text)]
            return [text[a:b].rstrip(" ") if b < len(text) else text[a:b] for a, b in zip(bounds, bounds[1:])]
    return None
