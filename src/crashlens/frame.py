"""Text lines in, LogLines out: ANSI and control characters stripped, server/torch log prefixes parsed off."""

from __future__ import annotations

import re
from collections.abc import Iterable, Iterator

from .records import LogLine

# Log text is untrusted and ends up on a terminal: every escape sequence (colours, cursor moves, screen
# clears, OSC 8 hyperlinks, window titles), every other C0/C1 control, line/paragraph separators and bidi
# overrides are removed here, once, so no later stage or renderer ever sees one. Tab and newline are kept
# (lines arrive already split, so a newline never reaches a LogLine from a log).
_ANSI = re.compile(
    r"(?:\x1b\]|\x9d)[^\x07\x1b\x9c]*(?:\x07|\x1b\\|\x9c)?"  # OSC ... BEL/ST (7- and 8-bit)
    r"|(?:\x1b\[|\x9b)[0-9;:?<=>]*[ -/]*[@-~]"  # CSI (7- and 8-bit)
    r"|\x1b[@-Z\\-_]"  # two-byte escapes
    r"|[\x00-\x08\x0b-\x1f\x7f-\x9f\u2028\u2029\u200e\u200f\u202a-\u202e\u2066-\u2069]"  # other controls
)
_NEEDS_STRIP = re.compile(r"[\x00-\x08\x0b-\x1f\x7f-\x9f\u2028\u2029\u200e\u200f\u202a-\u202e\u2066-\u2069]")

# Each prefix is tried in turn, repeatedly, so stacked prefixes (docker timestamp, Ray tag, vLLM tag,
# vLLM level, torch.distributed rank, glog) all come off.
_DOCKER_TS = re.compile(r"\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d(?:[.,]\d+)?(?:Z|[+-]\d\d:?\d\d)? ")
_VIEWER_PIPE = re.compile(r" {0,4}\| ")
# docker compose (`sglang-1  | `, v1 `sglang_1  | `) and `kubectl logs --prefix` (`[pod/name/container] `)
_COMPOSE = re.compile(r"[A-Za-z0-9][\w.-]*[-_]\d+ +\| ")
_KUBECTL = re.compile(r"\[pod/[^\]\s]+\] ")
# pytest shows an exception's lines as `E       <line>` (E, then indentation to column 8)
_PYTEST_E = re.compile(r"E(?: {7}|$)")
_RAY = re.compile(r"\((?P<proc>[^()]*?), rank=(?P<rank>\d+), pid=\d+(?:, ip=[\w.:]+)?\) ")
_VLLM_TAG = re.compile(r" ?\((?P<proc>[A-Za-z][\w ]*?(?: rank=\d+)?|[A-Za-z][\w]*) pid=\d+\) ?")
_VLLM_LEVEL = re.compile(
    r"(?P<level>DEBUG|INFO|WARNING|WARN|ERROR|CRITICAL) \d\d-\d\d \d\d:\d\d:\d\d(?:\.\d+)? "
    r"(?:\[[^\]]+?:\d+\] ?|[\w.]+:\d+\] ?)"
)
_SGLANG = re.compile(
    r"\[\d{4}-\d\d-\d\d \d\d:\d\d:\d\d(?:[.,]\d{1,6})?(?P<ranks>(?: (?:DP|PP|ATTN_CP|ATTN_DP|MOE_DP|CP|TP|EP)\d+)*)\] ?"
)
_TORCH_RANK = re.compile(r"\[rank(?P<rank>\d+)\]: ?")  # torchrun: `[rank0]: Traceback ...`, glog: `[rank4]:E0317 ...`
_GLOG = re.compile(
    r"(?P<level>[VIWEC])\d{4} \d\d:\d\d:\d\d\.\d+ +\d+ [^\s\]]+:\d+\](?: |$)"
    r"(?:\[[\d/_]+\] )?(?:\[__(?P<artifact>\w+)\] ?)?"
)
_PYLOG_OLD = re.compile(  # torch 2.1-2.2 graph-break logger
    r"\[\d{4}-\d\d-\d\d \d\d:\d\d:\d\d,\d+\] (?:\[[\d/_]+\] )?(?P<name>[\w.]+?)(?:\.__(?P<artifact>\w+))?: "
    r"\[(?P<level>[A-Z]+)\] ?"
)

_GLOG_LEVELS = {"V": "DEBUG", "I": "INFO", "W": "WARNING", "E": "ERROR", "C": "CRITICAL"}


def strip_controls(text: str) -> str:
    """The text a person should see: escape sequences and control characters removed (tab kept)."""
    if _NEEDS_STRIP.search(text) is None:
        return text
    return _ANSI.sub("", text)


def _rank_from_proc(proc: str) -> str:
    proc = proc.strip()
    return proc


def frame_line(source: str, lineno: int, raw: str) -> LogLine:
    text = strip_controls(raw)
    rank: str | None = None
    level: str | None = None
    artifact: str | None = None
    prefixed = False
    record_start = False
    changed = True
    while changed and text:
        changed = False
        c0 = text[0]
        if c0.isdigit():
            m = _DOCKER_TS.match(text)
            if m:
                text = text[m.end() :]
                changed = True
                continue
        if c0.isalnum():
            m = _COMPOSE.match(text)
            if m:
                text = text[m.end() :]
                changed = True
                continue
            if c0 == "E":
                m = _PYTEST_E.match(text)
                if m:
                    text = text[m.end() :]
                    level = level or "ERROR"
                    changed = True
                    continue
        if c0 in " (":
            m = _RAY.match(text)
            if m:
                rank = rank or f"rank{m.group('rank')}"
                text = text[m.end() :]
                prefixed = changed = True
                continue
            m = _VLLM_TAG.match(text)
            if m:
                rank = _rank_from_proc(m.group("proc"))
                text = text[m.end() :]
                prefixed = changed = True
                continue
            if c0 == " ":
                m = _VIEWER_PIPE.match(text)
                if m:
                    text = text[m.end() :]
                    changed = True
                    continue
        if c0 in "DIWEC":
            m = _VLLM_LEVEL.match(text)
            if m:
                level = m.group("level")
                text = text[m.end() :]
                prefixed = changed = True
                continue
        if c0 in "VIWEC":
            m = _GLOG.match(text)
            if m:
                level = _GLOG_LEVELS[m.group("level")]
                artifact = m.group("artifact") or artifact
                text = text[m.end() :]
                prefixed = changed = True
                continue
        if c0 == "[":
            m = _KUBECTL.match(text)
            if m:
                text = text[m.end() :]
                changed = True
                continue
            # torch 2.1-2.2's logger prints `[date time,ms] [0/0] name: [LEVEL]`, which the SGLang
            # pattern would half-match: try it first.
            m = _PYLOG_OLD.match(text)
            if m:
                level = m.group("level")
                artifact = m.group("artifact") or artifact
                text = text[m.end() :]
                prefixed = changed = True
                continue
            m = _SGLANG.match(text)
            if m:
                ranks = m.group("ranks").strip()
                if ranks:
                    rank = ranks
                text = text[m.end() :]
                prefixed = changed = record_start = True
                continue
            m = _TORCH_RANK.match(text)
            if m:
                rank = rank or f"rank{m.group('rank')}"
                text = text[m.end() :]
                prefixed = changed = True
                continue
        if c0 == "|" and text.startswith("| "):
            text = text[2:]
            changed = True
    return LogLine(source, lineno, text, rank, prefixed, level, artifact, record_start)


def frame_lines(source: str, lines: Iterable[str], start: int = 1) -> Iterator[LogLine]:
    for i, raw in enumerate(lines, start):
        yield frame_line(source, i, raw)
