"""Degrade a framed log the way a bug-report paste does, and say what evidence survived.

Kinds: `full` (untouched), `head-cut` (the paste starts late), `tail-cut` (it stops early), `window`
(a middle-only window of about 1,500 characters), `oneline` (newlines lost: the whole log on one physical
line, the logger prefix repeating inside it), `markdown` (`> ` quoting, runs of lines elided as `...`),
`quoted` (the traceback quoted inside another error or a JSON log record, newlines as literal `\\n`).

`evidence()` is the corpus's own, crashlens-independent reading of what a fragment still shows: dynamo
evidence at all, the culprit frame (file + line), the exception's headline.  A label follows from it: no
dynamo evidence means the fragment cannot be scored as a hit or a miss; no culprit frame means the culprit
is not scored; no headline and no culprit frame means the fixes are not scored.
"""

from __future__ import annotations

import json
import random
import re

KINDS = ("head-cut", "tail-cut", "window", "oneline", "markdown", "quoted")

DYNAMO_EVIDENCE = re.compile(
    r"torch\._dynamo|torch/_dynamo|torch\._inductor|torch/_inductor|from user code:|TORCHDYNAMO_VERBOSE|"
    r"suppress_errors|WON'T CONVERT|FAILED INLINING|Recompiling function|recompile_limit|cache_size_limit|"
    r"compile-graph-break-site|/gb/gb\d{4}|Graph break|graph_break|BackendCompilerFailed|TorchRuntimeError|"
    r"torch\._subclasses|fake_tensor|Unsupported: "
)


def _text(lines: list[tuple[str, str]]) -> str:
    return "".join(line + end for line, end in lines)


def _cut_lines(lines, lo, hi):
    return lines[lo:hi] or lines[-1:]


def make(kind: str, lines: list[tuple[str, str]], rng: random.Random) -> str:
    n = len(lines)
    if kind == "full":
        return _text(lines)
    if kind == "head-cut":
        return _text(_cut_lines(lines, int(n * rng.uniform(0.3, 0.7)), n))
    if kind == "tail-cut":
        return _text(_cut_lines(lines, 0, max(1, int(n * rng.uniform(0.35, 0.8)))))
    if kind == "window":
        text = _text(lines)
        if len(text) <= 1800:
            return text
        start = rng.randint(len(text) // 5, max(len(text) // 5, len(text) - 1500))
        start = text.rfind("\n", 0, start) + 1
        end = text.find("\n", start + rng.randint(1300, 1700))
        return text[start:] if end < 0 else text[start:end + 1]
    if kind == "oneline":
        return " ".join(line.rstrip("\r") for line, _ in lines) + "\n"
    if kind == "markdown":
        out, i = [], 0
        while i < n:
            if n > 30 and rng.random() < 0.04:
                skip = rng.randint(4, 15)
                out.append("> ...")
                i += skip
                continue
            out.append("> " + lines[i][0].rstrip("\r"))
            i += 1
        return "I get this when the server starts:\n\n" + "\n".join(out) + "\n\nAny idea?\n"
    if kind == "quoted":
        raw = [line.rstrip("\r") for line, _ in lines]
        tb_at = next((i for i, line in enumerate(raw) if "Traceback (most recent call last):" in line), None)
        body = "\n".join(raw[tb_at:] if tb_at is not None else raw[-40:])
        if rng.random() < 0.5:
            esc = body.replace("\\", "\\\\").replace("'", "\\'").replace("\n", "\\n")
            return (f"ERROR 2026-06-18 10:22:35,118 router.py:212 request 7f3e failed: "
                    f"RuntimeError('Worker failed with error \\'{esc}\\'')\n")
        rec = {"ts": "2026-06-18T10:22:35.118Z", "level": "error", "logger": "inference.worker",
               "msg": "model warm-up failed", "exc_info": body}
        return json.dumps(rec) + "\n"
    raise ValueError(kind)


def evidence(text: str, culprit: dict | None, headline: str) -> dict:
    dyn = bool(DYNAMO_EVIDENCE.search(text))
    frame = False
    if culprit:
        suffix, line = re.escape(culprit["file_suffix"]), culprit["line"]
        frame = bool(re.search(rf'{suffix}\\?"?,? line {line}\b|{suffix}:{line}\b', text))
    head = headline.strip()[:48]
    msg = bool(head) and (head in text or head.replace("'", "\\'") in text or json.dumps(head)[1:-1] in text)
    return {"dynamo": dyn, "culprit_frame": frame, "headline": msg}
