#!/usr/bin/env python3
"""A second degradation pass: the recordings copied the ways real bug-report pastes are mangled.

    python samples/corpus/degrade.py                 # samples/corpus-degraded/{cases,no-evidence}
    python samples/corpus/degrade.py --out /tmp/d --plain

Built from the EXISTING recordings (samples/corpus/raw and samples/corpus-heldout/raw, nothing is
re-recorded): for every recording one case, framed by framing.py (a framing that fits the degradation)
and degraded by one kind (rotating by position).  The kinds, each seen in real pastes (README.md cites one):

  wrap          hard wraps at 80/100/120 columns (a terminal copy, `fold`)
  wrap-indent   the same with each continuation indented (a logging handler that wraps to the terminal)
  crlf-tabs     CRLF line ends, tabs expanded, trailing blanks lost (a Windows editor / notepad)
  details       `<details><summary>Click to expand</summary>` and a collapsed middle `[... N lines omitted ...]`
  ansi          colour escapes (CPython 3.13's coloured traceback, coloured level words and prefixes)
  ansi-caret    the same escapes in their `cat -v` form, `^[[35m`
  ci-timestamps GitHub Actions `2025-05-01T12:00:00.1234567Z ` / Jenkins `[2025-05-01T12:00:00.123Z] `
  journald      `Dec 01 12:00:00 host python[123]: `
  kubectl-prefix `kubectl logs --prefix` without timestamps: `[pod/name/container] `
  compose-color docker compose's coloured service prefix (`\\x1b[36mvllm-1  | \\x1b[0m`)
  jupyter       the traceback as IPython prints it in a notebook (`Cell In[3], line 5`, `File path:N, in f(...)`)
  windows       Windows paths (`C:\\Users\\...\\Lib\\site-packages\\torch\\_dynamo\\...`)
and, in a later pass over every fourth recording (LATER_KINDS: its cases come after the first pass's):
  smart-quotes  “” ‘’ for " and ' (text pasted through Slack or macOS's smart-quotes substitution)

Labels follow from the recording's label exactly as build.py makes them (base_label, finish).  The
evidence is read on what a reader of the paste still has: for the kinds that only change how the text
looks (wraps, line ends, escapes, prefixes, paths) the text before that change; for `details`
the text with its middle collapsed; for `jupyter` the notebook text itself.  A fragment of a dynamo
failure that kept no evidence goes to no-evidence/.  Deterministic; standard library only.
"""

from __future__ import annotations

import gzip
import json
import random
import re
import shutil
import sys
import zlib
from pathlib import Path

HERE = Path(__file__).resolve().parent
SAMPLES = HERE.parent
sys.path.insert(0, str(HERE))

import build  # noqa: E402
import framing  # noqa: E402
from plan import load_plan  # noqa: E402

OUT = SAMPLES / "corpus-degraded"
SOURCES: tuple[tuple[Path, Path | None], ...] = (  # (raw recordings, their plan file)
    (HERE / "raw", None),  # this corpus's own plan
    (SAMPLES / "corpus-heldout" / "raw", SAMPLES / "corpus-heldout" / "plan.py"),
)

ANY = ("plain", "sglang-1", "sglang-2", "sglang-8", "vllm-old", "vllm-new", "ray", "docker", "kubectl", "mpi",
       "pytest")
SERVER = ("plain", "sglang-1", "sglang-8", "vllm-old", "vllm-new")
# kind -> the framings it is applied to (a CI timestamp goes on a test run, a notebook runs the program)
KINDS: dict[str, tuple[str, ...]] = {
    "wrap": ANY,
    "wrap-indent": ANY,
    "crlf-tabs": ANY,
    "details": ANY,
    "ansi": ANY,
    "ansi-caret": ANY,
    "ci-timestamps": ("plain", "pytest"),
    "journald": SERVER,
    "kubectl-prefix": SERVER,
    "compose-color": SERVER,
    "jupyter": ("plain",),
    "windows": ("plain", "pytest"),
}

# Added after the first pass's figures were taken (README.md): every LATER_EVERY-th recording once more.
LATER_KINDS: dict[str, tuple[str, ...]] = {
    "smart-quotes": ANY,
}
LATER_EVERY = 4

Lines = list[tuple[str, str]]


def _lines(text: str) -> Lines:
    out = []
    for part in text.split("\n"):
        out.append((part, "\n"))
    if out and out[-1][0] == "":
        out.pop()
    return out


def _text(lines: Lines) -> str:
    return "".join(line + end for line, end in lines)


# ------------------------------------------------------------------------------------------ the kinds

def wrap(lines: Lines, rng: random.Random, indent: bool) -> str:
    width = rng.choice((80, 100, 120))
    pad = " " * rng.choice((2, 4, 8, 20)) if indent else ""
    out = []
    for line, end in lines:
        line = line.rstrip("\r")
        first, rest = line[:width], line[width:]
        out.append(first + "\n")
        step = width - len(pad)
        while rest:
            out.append(pad + rest[:step] + "\n")
            rest = rest[step:]
    return "".join(out)


def crlf_tabs(lines: Lines, rng: random.Random) -> str:
    return "".join(line.rstrip("\r").expandtabs(8).rstrip() + "\r\n" for line, _ in lines)


_DQ = re.compile(r'"([^"\n]*)"')
_SQ_OPEN = re.compile(r"(^|[\s(\[{=])'")


def smart_quotes(lines: Lines, rng: random.Random) -> str:
    """Straight quotes turned typographic, as Slack and macOS's "smart quotes" substitution do to text
    pasted through them: "x" as “x”, 'x' as ‘x’, an apostrophe as ’."""
    out = []
    for line, _ in lines:
        line = _DQ.sub("\u201c\\1\u201d", line.rstrip("\r")).replace('"', "\u201d")
        out.append(_SQ_OPEN.sub("\\1\u2018", line).replace("'", "\u2019") + "\n")
    return "".join(out)


def details(lines: Lines, rng: random.Random) -> tuple[str, str]:
    """(the paste, its evidence view): a collapsed middle is lost to the reader too."""
    raw = [line.rstrip("\r") for line, _ in lines]
    n = len(raw)
    if n > 20:
        lo = rng.randint(n // 5, n // 2)
        k = rng.randint(max(3, n // 10), max(4, n // 3))
        hi = min(n - 3, lo + k)
        if hi > lo:
            raw = raw[:lo] + [f"[... {hi - lo} lines omitted ...]"] + raw[hi:]
    summary = rng.choice(("Click to expand", "Error log", "Full traceback (click to expand)"))
    body = "\n".join(raw)
    return (f"The server crashes during start-up.\n\n<details><summary>{summary}</summary>\n\n```\n{body}\n```\n\n"
            f"</details>\n", body + "\n")


# CPython 3.13's coloured traceback (Lib/_colorize.py, Lib/traceback.py): the file, line and function
# of a frame in magenta, the exception type bold magenta and its message magenta, the carets red.
_FRAME = re.compile(r'^(?P<pre>.*?)  File "(?P<file>[^"]+)", line (?P<line>\d+), in (?P<func>.+)$')
_EXC = re.compile(r"^(?P<pre>.*?)(?P<type>[A-Za-z_][\w.]*(?:Error|Exception|Unsupported|Failed|Warning|Exit))"
                  r": (?P<msg>.*)$")
_LEVEL = re.compile(r"\b(INFO|WARNING|ERROR|DEBUG|CRITICAL)\b")
_CARETS = re.compile(r"^(?P<pre>.*?\s)(?P<c>[~^]{3,})\s*$")


def _colour(line: str, esc: str) -> str:
    m = _FRAME.match(line)
    if m:
        return (f'{m["pre"]}  File {esc}[35m"{m["file"]}"{esc}[0m, line {esc}[35m{m["line"]}{esc}[0m, '
                f'in {esc}[35m{m["func"]}{esc}[0m')
    m = _CARETS.match(line)
    if m:
        return f'{m["pre"]}{esc}[1;31m{m["c"]}{esc}[0m'
    m = _EXC.match(line)
    if m and not line.startswith(" "):
        return f'{m["pre"]}{esc}[1;35m{m["type"]}{esc}[0m: {esc}[35m{m["msg"]}{esc}[0m'
    return _LEVEL.sub(lambda lv: f"{esc}[{ {'ERROR': '31', 'WARNING': '33', 'CRITICAL': '1;31'}.get(lv[1], '32')}m"
                      f"{lv[1]}{esc}[0m", line, count=1)


def ansi(lines: Lines, rng: random.Random, caret: bool) -> str:
    esc = "^[" if caret else "\x1b"
    return "".join(_colour(line.rstrip("\r"), esc) + "\n" for line, _ in lines)


def ci_timestamps(lines: Lines, rng: random.Random) -> str:
    t = rng.randint(0, 3000) * 1.0
    day = f"2025-0{rng.randint(1, 9)}-{rng.randint(10, 28)}"
    github = rng.random() < 0.6
    out = []
    for line, _ in lines:
        t += rng.random() * 0.02
        hh, mm, ss = 12 + int(t // 3600), int(t % 3600 // 60), t % 60
        if github:
            out.append(f"{day}T{hh:02d}:{mm:02d}:{ss:010.7f}Z {line.rstrip(chr(13))}\n")
        else:
            out.append(f"[{day}T{hh:02d}:{mm:02d}:{ss:06.3f}Z] {line.rstrip(chr(13))}\n")
    return "".join(out)


def journald(lines: Lines, rng: random.Random) -> str:
    host = rng.choice(("gpu-node-3", "localhost", "inference01"))
    unit, pid = rng.choice(("python", "vllm", "sglang", "bash")), rng.randint(1000, 99999)
    month = rng.choice(("Jan", "Mar", "Jun", "Aug", "Dec"))
    day, s = rng.randint(1, 28), rng.randint(0, 3000)
    out = []
    for i, (line, _) in enumerate(lines):
        t = s + i // 40
        out.append(f"{month} {day:02d} {10 + t // 3600:02d}:{t % 3600 // 60:02d}:{t % 60:02d} {host} {unit}[{pid}]: "
                   f"{line.rstrip(chr(13))}\n")
    return "".join(out)


def kubectl_prefix(lines: Lines, rng: random.Random) -> str:
    pod = rng.choice(("vllm-0", "sglang-server-7d9f8b6c5-x2kqp", "llama-deploy-5f6b9c-abcde"))
    ctr = rng.choice(("vllm", "server", "engine"))
    return "".join(f"[pod/{pod}/{ctr}] {line.rstrip(chr(13))}\n" for line, _ in lines)


def compose_color(lines: Lines, rng: random.Random) -> str:
    svc = rng.choice(("vllm-1", "sglang-1", "inference-1", "llm_server_1"))
    colour = rng.choice(("36", "33", "32", "35", "96"))
    pad = " " * max(2, 12 - len(svc))
    return "".join(f"\x1b[{colour}m{svc}{pad}| \x1b[0m{line.rstrip(chr(13))}\n" for line, _ in lines)


_EXC_LINE = re.compile(r"^(?P<type>[A-Za-z_][\w.]*)(?P<rest>:.*)?$")


def jupyter(lines: Lines, rng: random.Random) -> str:
    """IPython's context-mode traceback (hand-written rendering; the signatures in `in f(...)` are not known
    from the recording and are written `(*args, **kwargs)`; the entry script's frame becomes the cell)."""
    raw = [line.rstrip("\r") for line, _ in lines]
    out: list[str] = []
    cell = rng.randint(2, 30)
    i = 0
    while i < len(raw):
        if not raw[i].startswith("Traceback (most recent call last):"):
            out.append(raw[i])
            i += 1
            continue
        j = i + 1
        frames: list[tuple[str, str, str, str | None]] = []
        while j < len(raw) and raw[j].startswith("  "):
            m = _FRAME.match(raw[j])
            if m:
                src = raw[j + 1].strip() if j + 1 < len(raw) and raw[j + 1].startswith("    ") else None
                frames.append((m["file"], m["line"], m["func"], src))
            j += 1
        em = _EXC_LINE.match(raw[j]) if j < len(raw) else None
        name = em["type"].rsplit(".", 1)[-1] if em else "Exception"
        out += ["-" * 75, f"{name:<42}Traceback (most recent call last)"]
        for k, (file, line, func, src) in enumerate(frames):
            if k == 0 and func == "<module>":
                out.append(f"Cell In[{cell}], line {line}")
            else:
                out.append(f"File {file}:{line}, in {func}(*args, **kwargs)")
            if src is not None:
                out.append(f"--> {line} {src}")
            out.append("")
        if em:
            out.append(name + (em["rest"] or ""))
            j += 1
        i = j
    return "\n".join(out) + "\n"


_POSIX_PATH = re.compile(r"(?<![\w.:/\\])/(?:work|usr|opt|home|root|tmp)/[^\s\"'<>,:)\]]+")


def _windows_path(m: re.Match[str]) -> str:
    p = m.group(0)
    if "/site-packages/" in p:
        return "C:\\Users\\dev\\miniconda3\\envs\\torch\\Lib\\site-packages\\" + \
            p.split("/site-packages/", 1)[1].replace("/", "\\")
    std = re.match(r".*/lib/python3\.\d+/(.+)$", p)
    if std:
        return "C:\\Users\\dev\\miniconda3\\envs\\torch\\Lib\\" + std.group(1).replace("/", "\\")
    return "C:\\Users\\dev\\" + p.split("/", 2)[2].replace("/", "\\")


def windows(lines: Lines, rng: random.Random) -> str:
    return "".join(_POSIX_PATH.sub(_windows_path, line.rstrip("\r")) + "\r\n" for line, _ in lines)


def make(kind: str, lines: Lines, rng: random.Random) -> tuple[str, str]:
    """(the degraded paste, the text whose evidence a reader of it still has)."""
    plain = "".join(line.rstrip("\r") + "\n" for line, _ in lines)
    if kind == "details":
        return details(lines, rng)
    if kind == "jupyter":
        out = jupyter(lines, rng)
        return out, out
    fn = {
        "wrap": lambda: wrap(lines, rng, indent=False),
        "wrap-indent": lambda: wrap(lines, rng, indent=True),
        "crlf-tabs": lambda: crlf_tabs(lines, rng),
        "ansi": lambda: ansi(lines, rng, caret=False),
        "ansi-caret": lambda: ansi(lines, rng, caret=True),
        "ci-timestamps": lambda: ci_timestamps(lines, rng),
        "journald": lambda: journald(lines, rng),
        "kubectl-prefix": lambda: kubectl_prefix(lines, rng),
        "compose-color": lambda: compose_color(lines, rng),
        "windows": lambda: windows(lines, rng),
        "smart-quotes": lambda: smart_quotes(lines, rng),
    }[kind]
    return fn(), plain


def _recordings():
    """(repro, run info, recording text, torch version, name) of every recording, in a fixed order."""
    for raw_dir, plan_path in SOURCES:
        by_name = {r.name: r for r in load_plan(str(plan_path) if plan_path else None)}
        for vdir in sorted(raw_dir.glob("t*"), key=lambda p: [int(x) for x in p.name[1:].split(".")]):
            if not (vdir / "index.json").exists():
                continue
            index = json.loads((vdir / "index.json").read_text())
            for name, info in sorted(index["recordings"].items()):
                repro = by_name.get(name)
                if repro is None or not (vdir / f"{name}.log.gz").exists():
                    continue
                raw = gzip.decompress((vdir / f"{name}.log.gz").read_bytes()).decode("utf-8", "replace")
                text = raw.split("\n", 1)[1] if raw.startswith(build.HEADER) else raw
                yield repro, info, text, index["torch"], name


def main(argv: list[str] | None = None) -> int:
    import argparse

    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--out", default=str(OUT), help="write cases/ and no-evidence/ here (default samples/corpus-degraded)")
    ap.add_argument("--plain", action="store_true", help="write case-NNNN.log uncompressed")
    args = ap.parse_args(argv)
    out_root = Path(args.out)
    cases, no_evidence = out_root / "cases", out_root / "no-evidence"
    for d in (cases, no_evidence):
        shutil.rmtree(d, ignore_errors=True)
        d.mkdir(parents=True)
    writer = build.CaseWriter(cases, no_evidence, args.plain)
    recordings = list(_recordings())
    # The first pass gives every recording one kind of KINDS; the later pass (kinds added after the first
    # pass's figures were taken) adds cases of its kinds after them, so the first pass's cases keep their
    # numbers and contents.
    passes = [(KINDS, "degrade", 1), (LATER_KINDS, "degrade later", LATER_EVERY)]
    for kinds_of, seed, every in passes:
        kinds = list(kinds_of)
        pos = 0
        for at, (repro, info, text, torch_v, name) in enumerate(recordings):
            if at % every:
                continue
            label = build.base_label(repro, info, text, torch_v)
            lines = text.split("\n")
            if lines and lines[-1] == "":
                lines.pop()
            rng = random.Random(zlib.crc32(f"{seed} {torch_v} {name}".encode()))
            kind = kinds[pos % len(kinds)]
            fr = kinds_of[kind][(pos // len(kinds) + pos) % len(kinds_of[kind])]
            pos += 1
            framed = framing.frame(fr, lines, rng, repro.fullgraph)
            out, seen = make(kind, framed, rng)
            lab, ok = build.finish(label, seen, fr, "full")
            lab["fragment"] = kind
            lab["source"] = lab["source"] + f"; degraded by samples/corpus/degrade.py ({kind})"
            writer.write(lab, ok, out, kind)
    writer.report()
    return 0


if __name__ == "__main__":
    sys.exit(main())
