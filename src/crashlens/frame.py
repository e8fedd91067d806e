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
# A CI runner's time in brackets, as Jenkins' timestamper writes it: `[2025-07-31T02:13:19.873Z] `
# (GitHub Actions writes it bare, as docker does: _DOCKER_TS).
_BRACKET_TS = recache.compile(r"\[\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d(?:[.,]\d+)?(?:Z|[+-]\d\d:?\d\d)?\] ")
# journald / syslog: `Jan 28 10:40:07 localhost bash[367371]: ` (journalctl's default output).
_JOURNALD = recache.compile(
    r"(?:Jan|Feb|Mar|Apr|May|Jun|Jul|Aug|Sep|Oct|Nov|Dec) [ \d]\d \d\d:\d\d:\d\d [\w.-]+ [\w.@/-]+\[\d+\]: "
)
# pytest shows an exception's lines as `E` then blanks up to the column of the failing source line
# (`>       x = f()` gives `E       `, E + 7; a line indented twice more, `>           r = g()`, gives
# E + 11; `--tb=short` indents by 4: E + 3): E + 3 + 4k blanks, the widest that fits, so the message's own indentation (a quoted frame's
# two blanks) survives whatever the width.
_PYTEST_E = recache.compile(r"E(?: {3}(?: {4})*|$)")
_RAY = recache.compile(r"\((?P<proc>[^()]*?), rank=(?P<rank>\d+), pid=\d+(?:, ip=[\w.:]+)?\) ")
# A Ray actor without a rank: `(RayWorkerWrapper pid=1990, ip=192.168.23.10) `; its pid tells the workers apart.
_RAY_ACTOR = recache.compile(r"\((?P<proc>[A-Za-z_][\w.:-]*) pid=(?P<pid>\d+), ip=[\w.:]+\) ")
# MPI launchers: `srun -l` / `mpirun -l` write `0: `, Open MPI's --tag-output `[1,0]<stderr>:`.
_MPI = recache.compile(r"(?:(?P<rank>\d{1,4}): |\[\d+,(?P<rank2>\d+)\]<std(?:out|err)>: ?)")
# A markdown quote, as bug reports paste logs into replies: `> ` (nested: `> > `).
_QUOTE = recache.compile(r">(?: |$)")
# Python logging's default format: `CRITICAL:torch._inductor.scheduler:Error in codegen ...`.
_PYLOGGING = recache.compile(r"(?P<level>DEBUG|INFO|WARNING|ERROR|CRITICAL):(?P<logger>[A-Za-z_][\w.]*):")
# The logging cookbook's `%(asctime)s - %(name)s - %(levelname)s - %(message)s` (many applications' own format).
_PYLOGGING_ASCTIME = recache.compile(
    r"\d{4}-\d\d-\d\d \d\d:\d\d:\d\d,\d{3} - (?P<logger>[A-Za-z_][\w.]*) - (?P<level>DEBUG|INFO|WARNING|ERROR|CRITICAL) - ")
_VLLM_TAG = recache.compile(r" ?\((?P<proc>[A-Za-z][\w ]*?(?: rank=\d+)?|[A-Za-z][\w]*) pid=\d+\) ?")
_VLLM_LEVEL = recache.compile(
    r"(?P<level>DEBUG|INFO|WARNING|WARN|ERROR|CRITICAL) \d\d-\d\d \d\d:\d\d:\d\d(?:\.\d+)? "
    r"(?:\[[^\]]+?:\d+\] ?|[\w.]+:\d+\] ?)"
)
# A bracketed process tag before vLLM's level and date: vLLM-Omni's pipeline stages (`[Stage-0] ERROR 03-03
# 12:05:47 [diffusion_worker.py:430] `); only where vLLM's level prefix follows, so a line's own `[tag] ` stays.
_VLLM_STAGE = recache.compile(
    r"\[(?P<proc>[A-Za-z][\w-]{0,40})\] (?=(?:DEBUG|INFO|WARNING|WARN|ERROR|CRITICAL) \d\d-\d\d \d\d:\d\d:\d\d)")
_SGLANG = recache.compile(
    r"\[\d{4}-\d\d-\d\d \d\d:\d\d:\d\d(?:[.,]\d{1,6})?(?P<ranks>(?: (?:DP|PP|ATTN_CP|ATTN_DP|MOE_DP|CP|TP|EP)\d+)*)\] ?"
)
# torchrun: `[rank0]: Traceback ...`, glog: `[rank4]:E0317 ...`; with a role name before it
# (torchelastic's log-line prefix templates: `[trainer2][rank2]:`)
_TORCH_RANK = recache.compile(r"(?:\[[A-Za-z_][\w-]{0,40}\])?\[rank(?P<rank>\d+)\]: ?")
# torchelastic's per-worker line prefix (`torchrun --tee 3`, log_line_prefix_template's default
# `[{role_name}{local_rank}]:`): `[default0]:`, often before torch's own `[rank0]:`. Its number is the
# worker's local rank, a rank only where no global one follows.
_ELASTIC_ROLE = recache.compile(r"\[(?P<role>[A-Za-z_][\w-]{0,40}?)(?P<rank>\d+)\]:")
# A time of day in brackets that a notebook, a CI runner or a log viewer put before each line:
# `[01:17:10.938]: `, `[12:00:01] `; with its ISO 8601 date, Jenkins' timestamper (`[2025-07-31T02:13:19.873Z] `,
# the line's own text, blank lines included, after it).
_CLOCK = recache.compile(
    r"\[(?:\d{4}-\d\d-\d\dT)?\d\d:\d\d:\d\d(?:[.,]\d{1,9})?(?:Z|[+-]\d\d:?\d\d)?\]:?(?: |$)")
# nix's build log (`nix build -L`, `nix log`): each line of a derivation's build after its name and `> `
# (`diffusers> E   RuntimeError: ...`).
_NIX = recache.compile(r"[A-Za-z][\w.+-]{0,60}> ")
_GLOG = recache.compile(
    # the time and thread id are left out of some pastes (`V0627 torch/_dynamo/exc.py:209] ...`)
    # and a reporter may mask the time's digits with letters (`E1018 zz:23:38.281000 6040 ...`)
    r"(?P<level>[VIWEC])\d{4}(?: [\dxXzZ]{2}:[\dxXzZ]{2}:[\dxXzZ]{2}\.[\dxXzZ]+)?(?: +\d+)? (?P<gfile>[^\s\]]+):\d+\](?: |$)"
    r"(?:\[[\d/_]+\] )?(?:\[__(?P<artifact>\w+)\] ?)?"
)
# A glog prefix whose head (level, date, thread) the reporter elided: `.../torch/_dynamo/x.py:436] [16/2] `.
_GLOG_ELIDED = recache.compile(
    r"(?:\.\.\.|\u2026)(?P<gfile>[^\s\]]*\.py):\d+\](?: |$)(?:\[[\d/_]+\] )?(?:\[__(?P<artifact>\w+)\] ?)?"
)
# A paste whose first line starts inside a server's prefix, its level and date cut (`multiproc_worker_utils.py:236]
#   File ...`): what is left of vLLM's `LEVEL date file.py:N] ` says nothing more.
_PREFIX_TAIL = recache.compile(r"[A-Za-z_][\w.-]{0,80}\.py:\d+\](?: |$)")
_PYLOG_OLD = recache.compile(  # torch 2.1-2.2 graph-break logger
    r"\[\d{4}-\d\d-\d\d \d\d:\d\d:\d\d,\d+\] (?:\[[\d/_]+\] )?(?P<name>[\w.]+?)(?:\.__(?P<artifact>\w+))?: "
    r"\[(?P<level>[A-Z]+)\] ?"
)
# The same with its timestamp cut by the paste (`torch._dynamo.utils: [WARNING] Unsupported: ...`): only a
# torch.compile logger's name then says it is a prefix.
_PYLOG_HEADLESS = recache.compile(
    r"(?P<name>(?:torch\._(?:dynamo|inductor)|torchdynamo|torchinductor)(?:\.\w+)*?)(?:\.__(?P<artifact>\w+))?: "
    r"\[(?P<level>DEBUG|INFO|WARNING|ERROR|CRITICAL)\] ?"
)

# A log line indented as a whole (a paste inside a markdown list or a quoted reply): the blanks before a
# server's or torch's own line prefix (torchrun's `[rank0]:` too), which no traceback line starts with.
_INDENTED_LOG = recache.compile(
    r"[ \t]{1,12}(?=[VIWEC]\d{4}[ ][^\s\]]+:\d+\]|[VIWEC]\d{4} \d\d:\d\d:|(?:DEBUG|INFO|WARNING|ERROR|CRITICAL) \d\d-\d\d "
    r"|\[\d{4}-\d\d-\d\d \d\d:|(?:\[[A-Za-z_][\w-]{0,40}\])?\[rank\d+\]:)"
)
# Key-value tags a log shipper appends to every line (`... line 373 #torch_elastic_rank="2" #callSite="..."`).
_TAG_SUFFIX = recache.compile(r'(?: #\w+="[^"]*")+\s*$')
# Ray's log deduplication (on by default) keeps one copy of a line several workers printed and appends
# ` [repeated 4x across cluster]`, the first time with its note `(Ray deduplicates logs by default. ...)`.
_RAY_DEDUP_SUFFIX = recache.compile(
    r" \[repeated \d+x across cluster\](?: \(Ray deduplicates logs by default\.[^()]*\))?\s*$"
)

# torchdynamo's own logger before it moved into torch (2022): `Torchdynamo: [WARNING] Graph break: ...`
_DYNAMO_OLD_LOG = recache.compile(r"Torch[Dd]ynamo: \[(?P<level>DEBUG|INFO|WARNING|ERROR|CRITICAL)\] ")

_GLOG_LEVELS = {"V": "DEBUG", "I": "INFO", "W": "WARNING", "E": "ERROR", "C": "CRITICAL"}


# An escape sequence written out in caret notation (`cat -v`, `less -U`, some web log viewers): ESC as the
# two characters `^[`, so `\x1b[35m` arrives as `^[[35m` (in a real paste: `^[[36m(WorkerDict pid=38869)^[[0m`);
# or ESC spelled out as the letters `ESC` or the symbol `\u241b` that viewers draw for it
# (`ESC[1;36m(VllmWorkerProcess pid=62)ESC[0;0m ERROR ...`).
_CARET_CSI = recache.compile(r"(?:\^\[|ESC|\u241b)\[[0-9;:?<=>]*[ -/]*[@-~]")


def strip_controls(text: str) -> str:
    """The text a person should see: escape sequences (also in caret notation, `^[[31m`) and control
    characters removed (tab kept)."""
    if "^[[" in text or "ESC[" in text or "\u241b[" in text:
        text = _CARET_CSI.sub("", text)
    if _NEEDS_STRIP.search(text) is None:
        return text
    return _ANSI.sub("", text)


_BAR = recache.compile(r"\| ")
_ALNUM = "0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz"

# Every prefix a log line can carry, in the order they are tried: (characters a line must start with
# for the prefix to be possible, its pattern, what it tells, whether it is a prefix only on a paste's
# first line). A line sheds prefixes until none matches, so stacked ones (docker time, Ray tag, vLLM tag,
# vLLM level, torch rank, glog) all come off. torch 2.1-2.2's logger (`[date time,ms] [0/0] name: [LEVEL]`)
# comes before SGLang's bracket, which would half-match it. The tail of a cut prefix (`_PREFIX_TAIL`) is
# one only on a paste's first line: further on, such a line is the rest of the line before it, cut by a
# terminal's wrap inside its prefix, and is joined back to it (traceback.Rewrap).
_PREFIXES: tuple[tuple[str, re.Pattern[str], str, bool], ...] = (
    ("0123456789", _DOCKER_TS, "wrapper", False),
    (" \t", _INDENTED_LOG, "wrapper", False),
    (" [", _SGR_REMNANT, "wrapper", False),
    (_ALNUM, _COMPOSE, "wrapper", False),
    (_ALNUM, _NIX, "wrapper", False),
    ("E", _PYTEST_E, "pytest", False),
    (">", _QUOTE, "wrapper", False),
    ("0123456789[", _MPI, "mpi", False),
    (" (", _RAY, "ray", False),
    ("(", _RAY_ACTOR, "ray-actor", False),
    (" (", _VLLM_TAG, "process", False),
    (" ", _VIEWER_PIPE, "wrapper", False),
    ("DIWEC", _VLLM_LEVEL, "level", False),
    ("DIWEC", _PYLOGGING, "pylogging", False),
    ("0123456789", _PYLOGGING_ASCTIME, "pylogging", False),
    ("VIWEC", _GLOG, "glog", False),
    (".\u2026", _GLOG_ELIDED, "glog", False),
    (_ALNUM + "_", _PREFIX_TAIL, "wrapper", True),
    ("[", _KUBECTL, "wrapper", False),
    ("[", _BRACKET_TS, "wrapper", False),
    ("ADFJMNOS", _JOURNALD, "wrapper", False),
    ("[", _PYLOG_OLD, "pylog", False),
    ("t", _PYLOG_HEADLESS, "pylog", False),
    ("T", _DYNAMO_OLD_LOG, "level", False),
    ("[", _VLLM_STAGE, "process", False),
    ("[", _SGLANG, "sglang", False),
    ("[", _TORCH_RANK, "torch-rank", False),
    ("[", _ELASTIC_ROLE, "elastic-role", False),
    ("[", _CLOCK, "wrapper", False),
    ("|", _BAR, "wrapper", False),
)


# The prefixes a line may start with, by its first character, in _PREFIXES's order; and the same without
# the first-line-only ones (for every line but a paste's first). Every line of a crash is framed, some
# several times, and trying the 27 prefixes one by one in Python was the framing's largest cost.
_BY_FIRST: dict[str, tuple[tuple[re.Pattern[str], str], ...]] = {
    c: tuple((pattern, what) for first, pattern, what, _ in _PREFIXES if c in first)
    for c in {c for first, *_ in _PREFIXES for c in first}
}
_BY_FIRST_LATER: dict[str, tuple[tuple[re.Pattern[str], str], ...]] = {
    c: tuple((pattern, what) for first, pattern, what, only_first in _PREFIXES if c in first and not only_first)
    for c in _BY_FIRST
}


def _next_prefix(text: str, first_line: bool = False) -> tuple[str, re.Match[str]] | None:
    """The prefix the line starts with, if any: (what it is, its match)."""
    for pattern, what in (_BY_FIRST if first_line else _BY_FIRST_LATER).get(text[0], ()):
        m = pattern.match(text)
        if m is not None:
            return what, m
    return None


# Typographic quotes that Slack and macOS's smart-quotes substitution put in text pasted through them
# (`File “/x/y.py”, line 3`, `WON’T CONVERT`): read as the straight quotes the program printed. The
# fast path's markers hold the typographic spellings of the markers with quotes (evidence.RULES).
_TYPOGRAPHIC_QUOTES = str.maketrans({"\u201c": '"', "\u201d": '"', "\u2018": "'", "\u2019": "'"})


def frame_line(source: str, lineno: int, raw: str) -> LogLine:
    text = strip_controls(raw)
    if not text.isascii():
        text = text.translate(_TYPOGRAPHIC_QUOTES)
    width = len(text)
    rank: str | None = None
    level: str | None = None
    artifact: str | None = None
    logger: str | None = None
    logged_at: str | None = None
    prefixed = record_start = False
    local_rank: str | None = None
    if text[:1] == "`" and text.endswith("`") and len(text) > 2 and "`" not in text[1:-1]:
        text = text[1:-1]  # a line pasted as markdown inline code: `RuntimeError: ...`
    while text:
        got = _next_prefix(text, lineno == 1)
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
        elif what == "elastic-role":
            local_rank = local_rank or f"rank{m.group('rank')}"
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
            lv = m.groupdict().get("level")
            level = _GLOG_LEVELS.get(lv, lv) if lv else level
            artifact = m.group("artifact") or artifact
            if what == "pylog":  # torch 2.0-2.2's format names its logger: `torch._inductor.graph: [ERROR]`
                logger = m.group("name")
            else:
                logged_at = logged_at or m.group("gfile")
        elif what == "sglang":
            rank = m.group("ranks").strip() or rank
            record_start = True
    rank = rank or local_rank
    if text.endswith('"') and ' #' in text:
        tags = _TAG_SUFFIX.search(text)
        if tags is not None:
            text = text[: tags.start()]
    if "x across cluster]" in text:
        dedup = _RAY_DEDUP_SUFFIX.search(text)
        if dedup is not None:
            text = text[: dedup.start()]
    if "](" in text:
        text = _MD_LINK.sub(r"\1", text)
    return LogLine(source, lineno, text, rank, prefixed, level, artifact, record_start, logger, logged_at, width)


# A path rendered as a markdown link by the notebook that printed it (VS Code Jupyter, Colab):
# `File "[/tmp/ipykernel_1/2.py](https://vscode-remote+...)", line 155`, `[<ipython-input-19-x>](https://localhost:8080/#)
# in f()`: the link's text is the path.
_MD_LINK = recache.compile(r"\[([^\[\]\n]{1,400})\]\((?:https?|vscode[\w+-]*|file):[^()\s]{0,2000}\)")


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
_QUOTED_EXC = recache.compile(r"['\"](?=torch\._(?:dynamo|inductor)\.exc\.[A-Z]\w*: )")


# A frame line with the reporter's prose in front (`The error is:  File "/p/x.py", line 3, in f`, `... here I
# get "  File "C:\\...", line 139, in g`): the prose, then the frame as the traceback printed it.
# Prose has words: a mark that leads a frame (the guard's user stack `- File ...`, a comment's `# File`) is none,
# and so is the rest of a log prefix a terminal wrapped (`multiproc_executor.py:671]   File ...`: Rewrap's).
# An exception's own message that quotes a stack (cudagraph trees' `Error: ... Stack trace: File ...`) is no
# prose: the frame is part of that message.
_QUOTING_EXC = recache.compile(r"\b\w*(?:Error|Exception): ")
_GLUED_FRAME = recache.compile(
    r'^(?P<prose>\s*[^\s#].*?[A-Za-z]{2}.*?\S)(?<!\])\s*(?P<frame>File "[^"]+", line \d+, in [\w<>.]+)\s*$')


def frame_physical(source: str, lineno: int, raw: str) -> list[LogLine]:
    """The logical lines one physical line holds, framed (all with the physical line's number).

    Almost always one. Bug-report pastes and log shippers sometimes lose newlines: a message logged
    with its newlines escaped (`'...\\n  Explanation: ...\\nfrom user code:\\n ...'`, a repr or JSON
    string), lines joined where the logger's prefix repeats (`[... TP0] Traceback ... [... TP0]
    File "..."`), or a whole paste on one line, prefixes mixed or none (`Traceback (most recent call
    last):   File "x.py", line 3, in f     foo() torch._dynamo.exc.Unsupported: ...`). All are split
    back into the lines they were.
    """
    first = frame_line(source, lineno, raw)
    if ".exc." in raw and "torch._" in raw:
        first = _quoted_value(first)
    if first.text.count('File "') == 1 and not first.text.lstrip().startswith('File "'):
        glued = _GLUED_FRAME.match(first.text)
        if glued is not None and _QUOTING_EXC.search(glued["prose"]) is None:
            # prose the reporter wrote before a traceback's first frame, on its line
            return [_with_text(first, glued["prose"], 0), _with_text(first, glued["frame"], 0)]
    if len(raw) < MIN_JOINED:
        return [first]
    text = strip_controls(raw)
    if _lost_newlines(text):
        lines = _split_joined(source, lineno, text, first)
    else:
        pieces = _split_repeated_prefix(raw, first)
        lines = [first] if pieces is None else [frame_line(source, lineno, piece) for piece in pieces]
    out: list[LogLine] = []
    for line in lines:
        escaped = _split_escaped(line.text)
        if escaped is None:
            out.append(line)
            continue
        out.append(_escaped_head(source, lineno, line, escaped[0]))
        out.extend(frame_line(source, lineno, part) for part in escaped[1:])
    if len(out) > 1:  # pieces of one physical line: no piece ends where a wrap cut
        out = [_with_text(line, line.text, 0) for line in out]
    return out


# The string value an escaped message starts in: `"exc_info": "` (JSON), `'msg': '` (a repr), `msg="`.
_VALUE_OPEN = recache.compile(r"""[:=]\s*["']((?:[^"'\\]|\\.)*)$""")


def _escaped_head(source: str, lineno: int, line: LogLine, head: str) -> LogLine:
    """The first line of an escaped message. When the string it starts in opens with a log prefix of
    its own (a shipper's JSON record of glog lines: `"exc_info": "V1201 ... [__graph_breaks] Traceback
    ...`), that line is framed from its own prefix, as the lines after it are: its logger artifact says
    what the record is (a graph_breaks entry is a logged break, not a crash)."""
    m = _VALUE_OPEN.search(head)
    if m is not None and m.group(1):
        framed = frame_line(source, lineno, m.group(1))
        if framed.prefixed:
            return framed
    return _with_text(line, head)


# A paste that lost its newlines. What only ever starts a line of a traceback: a frame, its header, a
# chain marker, dynamo's `from user code:`. A physical line with two of them, each after a blank (not
# after a `\n` escape: that is an escaped message, split by _split_escaped), is a traceback that lost
# its newlines. Ordinary long lines (server arguments, request logs, warnings) hold none of them: the
# test is two substring searches for them.
_JOINED_HINTS = ('File "', "Traceback (most recent call last):")
_JOINED_ANCHOR = recache.compile(
    r'(?:^|(?<=\s))(?:File "[^"]+", line \d+|Traceback \(most recent call last\):|from user code:'
    r"|The above exception was the direct cause of|During handling of the above exception)"
)
# Where, inside such a line, one line of a traceback or a dynamo report began (after a blank): `at` is
# the line's first word. A frame's line ends after its function name; its source line follows.
_LINE_START = recache.compile(
    r"(?:^|\s)(?P<at>"
    r'(?P<frame>File "[^"]+", line \d+(?:, in (?P<func>\S+))?)'
    # lines that are whole: what follows them is the next line
    r"|(?P<whole>(?P<tb>Traceback \(most recent call last\):)"
    r"|The above exception was the direct cause of the following exception:"
    r"|During handling of the above exception, another exception occurred:"
    r"|from user code:|User Stack \(most recent call last\):|User code traceback:"
    r"|The graph break occurred in the following user code:"
    r"|You can suppress this exception and fall back to eager by setting:"
    r"|(?P<caret>[~^]{2,})"  # the carets under a source line (3.11+)
    # pytest's section rules (`==== FAILURES ====`, `---- Captured stderr call ----`)
    r"|(?P<rc>[=_-])(?P=rc){4,}(?: [^\n]{1,100}? (?P=rc){5,})?)(?=\s|$)"
    r"|Graph break in user code at |Graph Break Reason: "
    r"|WON'T CONVERT |FAILED INLINING <code object |Recompiling function "
    r"|(?P<section>Explanation|Hint|Developer debug context): "
    r"|For more details about this graph break"
    r"|Set TORCH_LOGS=|Set TORCHDYNAMO_VERBOSE="
    r"|(?P<tail>import torch\._dynamo|torch\._dynamo\.config\.suppress_errors = True)(?=\s|$)"  # the banner's tail
    r"|\S+\.py:\d+: [A-Z]\w*Warning: "  # a Python warning: `/x/y.py:12: UserWarning: msg`
    r"|(?:FAILED|ERROR) \S+::\S+ - "  # pytest's short summary
    r"|(?:[a-z_]\w*\.)+_?[A-Z]\w*:(?: |$)"  # `torch._dynamo.exc.Unsupported: msg`
    r"|(?:[A-Z]\w*)?(?:Error|Exception):(?: |$)"  # `RuntimeError: msg`
    r")"
)
# Log prefixes distinctive enough to mark a line start anywhere in such a line (not `0: `, `> `, `E `).
_STRONG_PREFIXES = (_DOCKER_TS, _BRACKET_TS, _JOURNALD, _COMPOSE, _KUBECTL, _RAY, _RAY_ACTOR, _VLLM_TAG, _VLLM_LEVEL, _PYLOGGING,
                    _GLOG, _PYLOG_OLD, _SGLANG, _TORCH_RANK, _ELASTIC_ROLE)
_PREFIX_AT = recache.compile(
    r"(?<=\s)(?:" + "|".join(re.sub(r"\(\?P<\w+>", "(?:", p.pattern) for p in _STRONG_PREFIXES)
    + r"|\[\d+,\d+\]<std(?:out|err)>:)"
)


def _after_escape(text: str, at: int) -> bool:
    """Whether the blanks before position `at` follow a `\\n` escape."""
    k = at
    while k > 0 and text[k - 1] in " \t":
        k -= 1
    return text[k - 2 : k] == "\\n"


def _lost_newlines(text: str) -> bool:
    """Two line starts of a traceback with no `\\n` escape between them: a paste that lost its
    newlines (an escaped message has an escape before each of its lines: _split_escaped's)."""
    if _JOINED_HINTS[0] not in text and _JOINED_HINTS[1] not in text:
        return False
    last = -1
    for m in _JOINED_ANCHOR.finditer(text):
        if last >= 0 and "\\n" not in text[last : m.start()]:
            return True
        last = m.end()
    return False


def _prefix_end(text: str, at: int) -> int:
    """Where the stack of log prefixes that starts at `at` ends (`at` if none does)."""
    end = at
    while end < len(text):
        got = _next_prefix(text[end:])
        if got is None or got[1].end() == 0:
            break
        end += got[1].end()
    return end


def _split_joined(source: str, lineno: int, text: str, first: LogLine) -> list[LogLine]:
    """A traceback paste that lost its newlines, split back: before every log prefix (the distinctive
    ones, and repeats of the first line's own), then, inside each prefixed piece, at every line start
    of a traceback or dynamo report (_LINE_START). The lines inside a piece are unprefixed, as a
    record's continuation lines are in an SGLang log."""
    own_end = len(text) - len(first.text)
    starts = [m.start() for m in _PREFIX_AT.finditer(text, own_end)]
    own = text[:own_end]
    if own.strip():
        exact = len(own) < MIN_PREFIX  # a short prefix (`0: `) repeats only exactly
        rx = re.escape(own) if exact else _DIGIT_RUN.sub(lambda _m: r"\d+", re.escape(own))
        starts += [m.start() for m in re.finditer(rf"(?<=\s){rx}", text) if m.start() >= own_end]
    cuts = [0]
    end = own_end
    for at in sorted(set(starts)):
        if at < end or _after_escape(text, at):
            continue
        stop = _prefix_end(text, at)
        if stop > at:
            cuts.append(at)
            end = stop
    out: list[LogLine] = []
    bounds = [*cuts, len(text)]
    for a, b in zip(bounds, bounds[1:]):
        if a == 0 and b == len(text):
            line = first
        else:  # the prefix's own blank kept: a prefixed empty line (`(Actor pid=1) `) is still prefixed
            line = frame_line(source, lineno, text[a:b])
            line = _with_text(line, line.text.rstrip(" \t"))
        parts = _split_line_starts(line.text)
        out.append(_with_text(line, parts[0]) if len(parts) > 1 else line)
        out.extend(frame_line(source, lineno, part) for part in parts[1:])
    return out


def _split_line_starts(text: str) -> list[str]:
    """`text` cut where the lines of a traceback or dynamo report began (_LINE_START). An indented line
    (a frame, its source line, a section of dynamo's message) keeps its indentation, less the one blank
    that stood for the newline; a line at column 0 (an exception, `from user code:`) starts at its word."""
    cuts = [0]

    def cut(at: int, indented: bool) -> None:
        k = at
        while k > cuts[-1] and text[k - 1] in " \t":
            k -= 1
        if text[k - 2 : k] == "\\n":
            return  # an escaped message (_split_escaped's)
        before = text[cuts[-1] : k].strip()
        if not before:
            # Nothing before it in this line; but a line at column 0 after a blank is the line after a
            # prefixed empty line (`(Actor pid=1) ` then `Traceback ...`).
            if indented or k != 0 or at == 0:
                return
        else:
            mark = before.rsplit(None, 1)[-1]
            if not any(c.isalnum() for c in mark) and mark.strip("^~") and not mark.endswith((")", "]", "}")):
                # a mark leads the line: a bullet (the guard's user stack: `- File ...`), a comment
                # (`# File ...` inside dynamo's explanation), a quote; a closing bracket ends the line
                # before (2.1's `call_method ... __call__ [] {}` message), it leads nothing
                return
        cuts.append(k + 1 if indented and at - k >= 2 else at)

    for m in _LINE_START.finditer(text):
        at = m.start("at")
        if m.group("tb") is not None and text[:at].endswith(": "):
            continue  # `Scheduler hit an exception: Traceback ...`: one line, the message its lead
        cut(at, any(m.group(g) is not None for g in ("frame", "section", "caret", "tail")))
        if (m.group("func") or m.group("whole")) and m.end() < len(text) and text[m.end()].isspace() \
                and text[m.end():].strip():
            cut(len(text) - len(text[m.end():].lstrip()), True)  # what follows: a new line
    bounds = [*cuts, len(text)]
    return [text[a:b].rstrip(" \t") for a, b in zip(bounds, bounds[1:])]


def _with_text(line: LogLine, text: str, width: int | None = None) -> LogLine:
    return LogLine(line.source, line.lineno, text, line.rank, line.prefixed, line.level, line.artifact,
                   line.record_start, line.logger, line.logged_at, line.width if width is None else width)


_OUTER_EXCEPTION = recache.compile(r"(?:Error|Exception|Warning)\b")


def _quoted_value(line: LogLine) -> LogLine:
    """A dynamo exception on one line, quoted as a value (`{'message': 'torch._dynamo.exc.X: ...'}`, a JSON
    field) and not inside another exception's message (vLLM's `RuntimeError: Worker failed with error
    '...'` is read as that exception): the line as the traceback printed it."""
    text = line.text
    m = _QUOTED_EXC.search(text)
    if m is None or _OUTER_EXCEPTION.search(text, 0, m.start()):
        return line
    q = text[m.start()]
    end = text.rfind(q, m.end())
    body = text[m.end():end] if end > 0 and not text[end + 1:].strip(" ,}])") else text[m.end():]
    if "\\n" in body:
        return line  # a message with its newlines escaped: _split_escaped splits it
    return _with_text(line, body.replace("\\" + q, q))


def _split_escaped(text: str) -> list[str] | None:
    """A message with its newlines escaped as `\\n`, split at them (and `\\"`, `\\'` unescaped), when it
    is a traceback or a dynamo report; None otherwise."""
    if text.count("\\n") < 2:
        return None
    parts = text.split("\\n")
    rest = "\n".join(parts[1:])
    # A dynamo exception quoted as a value (`{'message': 'torch._dynamo.exc.X: ...`, a repr or JSON): its
    # first line starts at the exception's type, as the traceback printed it.
    quoted = _QUOTED_EXC.search(parts[0])
    if quoted is None and not any(e in rest for e in _ESCAPED_EVIDENCE):
        return None
    if quoted is not None:
        parts[0] = parts[0][quoted.end():]
    return [p.replace('\\"', '"').replace("\\'", "'") for p in parts]


# prefix with its digits zeroed -> the pattern of its repeats (digits may differ), for _split_repeated_prefix:
# every long line of a crash is looked at for a repeat of its prefix, and escaping, rewriting and looking
# the pattern up in re's cache cost more than the search. Bounded: a log's prefixes are few.
_REPEATS: dict[str, re.Pattern[str]] = {}
_ZERO_DIGITS = str.maketrans("123456789", "000000000")


def _repeat_of(prefix: str) -> re.Pattern[str]:
    """The pattern of a repeat of this prefix, its digit runs any digit runs (it depends only on where
    they are, so it is kept by the prefix with its digits zeroed)."""
    key = prefix.translate(_ZERO_DIGITS)
    rx = _REPEATS.get(key)
    if rx is None:
        if len(_REPEATS) >= 256:
            _REPEATS.clear()
        rx = _REPEATS[key] = re.compile(_DIGIT_RUN.sub(lambda _m: r"\d+", re.escape(prefix)))
    return rx


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
        rx = _repeat_of(prefix)
        cuts = [m.start() for m in rx.finditer(text, end)]
        if cuts:
            bounds = [0, *cuts, len(text)]
            return [text[a:b].rstrip(" ") if b < len(text) else text[a:b] for a, b in zip(bounds, bounds[1:])]
    return None
