#!/usr/bin/env python3
"""Build the labelled corpus (samples/corpus/cases/) from the recordings in samples/corpus/raw/.

    python samples/corpus/build.py
    python samples/corpus/build.py --plan samples/corpus-heldout/plan.py --raw-dir samples/corpus-heldout/raw \
        --out samples/corpus-heldout            # another corpus recorded with its own plan

For every recording of every torch release: the plain log, one framed variant (framing.py, rotating
through SGLang 1/2/8 ranks, vLLM old/new, Ray, docker compose, kubectl, MPI, pytest) and one degraded
paste (fragment.py, rotating kinds, on another framing).  Labels come from the run (index.json: the
exception chain the program raised) and the reproducer's source (`# expect:` markers); see README.md.
Fragments of a dynamo failure that kept no dynamo evidence go to no-evidence/, not to cases/.
Deterministic: the same recordings give byte-identical output.  Standard library only.
"""

from __future__ import annotations

import ast
import gzip
import json
import random
import re
import shutil
import sys
import zlib
from pathlib import Path

try:
    import tomllib
except ImportError:  # Python 3.10
    import tomli as tomllib  # type: ignore[no-redef]

HERE = Path(__file__).resolve().parent
SAMPLES = HERE.parent
REPRO = SAMPLES / "repro"
RAW = HERE / "raw"
sys.path.insert(0, str(HERE))

import fragment  # noqa: E402
import framing  # noqa: E402
from plan import BY_NAME, Repro, load_plan  # noqa: E402

DYNAMO_EXC = ("torch._dynamo.", "torch._inductor.", "torch._subclasses.", "torch.fx.experimental.symbolic_shapes.")
FRAMED = [f for f in framing.FRAMINGS if f != "plain"]
HEADER = "# crashlens corpus recording:"


def marker_line(file: str, marker: str) -> tuple[int, str]:
    """(line, enclosing function) of the `# expect: <marker>` comment in samples/repro/<file>."""
    src = (REPRO / file).read_text()
    pat = re.compile(rf"#\s*expect(?:\([^)]*\))?:\s*{re.escape(marker)}\s*$")
    hits = [i for i, line in enumerate(src.splitlines(), 1) if pat.search(line)]
    if len(hits) != 1:
        raise SystemExit(f"{file}: marker {marker!r} found {len(hits)} times")
    func = "<module>"
    for node in ast.walk(ast.parse(src)):
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)) and node.lineno <= hits[0] <= node.end_lineno:
            func = node.name  # innermost wins: ast.walk visits outer functions first
    return hits[0], func


FRAME = re.compile(r'File "[^"]*?/samples/repro/([^"]+)", line (\d+), in (\S+)')


def marker_frame_seen(text: str) -> dict | None:
    """The last frame printed in the log that lands on a `# expect:` line of a reproducer file.

    Where a release stops somewhere else than planned (torch 2.4 stops at `os.path.join`, one line before the
    planned `open`), the markers on every candidate stop line let the run itself say which one it hit."""
    found = None
    for m in FRAME.finditer(text):
        path = REPRO / m.group(1)
        if not path.is_file():
            continue
        lines = path.read_text().splitlines()
        n = int(m.group(2))
        if 0 < n <= len(lines) and re.search(r"#\s*expect(?:\([^)]*\))?:\s*\S+\s*$", lines[n - 1]):
            found = {"file_suffix": m.group(1), "line": n, "function": m.group(3)}
    return found


def expected_culprit(name: str) -> tuple[str, str] | None:
    exp = tomllib.loads((SAMPLES / "expected.toml").read_text())
    entry = exp.get(f"raw/{name}.log") or {}
    if entry.get("culprit_file_suffix") and entry.get("culprit_marker"):
        return entry["culprit_file_suffix"], entry["culprit_marker"]
    return None


def base_label(repro: Repro, info: dict, text: str, torch_v: str) -> dict:
    chain = info.get("exception_chain") or []
    rc = info.get("exit_code")
    dynamo = any(c.startswith(DYNAMO_EXC) for c in chain)
    if not chain and rc not in (0, None):
        dynamo = repro.kind == "dynamo"  # a crash printed without reaching sys.excepthook (logged by the program)
    culprit, source = None, None
    if dynamo:
        where = repro.culprit or expected_culprit(repro.name)
        if where:
            line, func = marker_line(*where)
            if re.search(rf'{re.escape(where[0])}", line {line}\b', text):
                culprit, source = {"file_suffix": where[0], "line": line, "function": func}, "planned marker"
        if culprit is None:
            culprit = marker_frame_seen(text)
            source = "last marked frame in the log" if culprit else None
    pre, tb = framing.split(text.split("\n"))
    headline = (framing.message(tb) or [""])[0] if tb else ""
    return {
        "is_dynamo_failure": dynamo,
        "culprit": culprit,
        "accepted_fix_keywords": repro.accepted() if dynamo else [],
        # a run that went on, or one that died of its own (eager) error after dynamo's warnings: non-fatal
        # dynamo findings are right there, a fatal dynamo report is a false alarm
        "dynamo_warnings_ok": (not dynamo) and (rc == 0 or bool(fragment.DYNAMO_EVIDENCE.search(text))),
        "torch_version": torch_v,
        "repro": repro.name,
        "fullgraph": repro.fullgraph,
        "culprit_in": ("library" if repro.library else "user") if dynamo else None,
        "expected_kind": repro.kind,
        "outcome": {"exit_code": rc, "exception_chain": chain},
        "culprit_from": source,
        "headline": headline,
    }


def finish(label: dict, text: str, framing_name: str, kind: str) -> tuple[dict, bool]:
    """The case label for one framed/degraded text; False when a dynamo failure kept no evidence."""
    lab = dict(label)
    ev = fragment.evidence(text, label["culprit"], label["headline"])
    lab.update(framing=framing_name, fragment=kind, evidence=ev)
    scoreable = True
    if label["is_dynamo_failure"]:
        if not ev["dynamo"] and not ev["culprit_frame"]:
            scoreable = False
        if not ev["culprit_frame"]:
            lab["culprit"] = None
        if not (ev["headline"] or ev["culprit_frame"]):
            lab["accepted_fix_keywords"] = []
    lab["source"] = ("real torch run recorded by samples/corpus/record.py; "
                     + ("no framing" if framing_name == "plain" else
                        f"framing hand-written by samples/corpus/framing.py ({framing_name})")
                     + ("" if kind == "full" else f"; degraded by samples/corpus/fragment.py ({kind})"))
    return lab, scoreable



class CaseWriter:
    """Numbers and writes the cases (`case-NNNN`) and the fragments that kept no evidence (`none-NNNN`),
    each a log (gzipped unless plain) and its label, and counts them by group for the summary."""

    def __init__(self, cases: Path, no_evidence: Path, plain: bool) -> None:
        self.cases, self.no_evidence, self.plain = cases, no_evidence, plain
        self.n_case = self.n_none = 0
        self.summary: dict[str, int] = {}

    def write(self, lab: dict, ok: bool, out: str, group: str) -> None:
        if ok:
            self.n_case += 1
            stem, folder = f"case-{self.n_case:04d}", self.cases
        else:
            self.n_none += 1
            stem, folder = f"none-{self.n_none:04d}", self.no_evidence
            lab["evidence"]["none"] = True
        data = out.encode("utf-8")
        if self.plain:
            (folder / f"{stem}.log").write_bytes(data)
        else:
            (folder / f"{stem}.log.gz").write_bytes(gzip.compress(data, mtime=0))
        (folder / f"{stem}.json").write_text(json.dumps(lab, indent=1) + "\n")
        key = f"{group} {'dynamo' if lab['is_dynamo_failure'] else 'other'}"
        self.summary[key] = self.summary.get(key, 0) + 1

    def report(self) -> None:
        print(f"{self.n_case} cases in {self.cases}, {self.n_none} no-evidence fragments")
        for k, v in sorted(self.summary.items()):
            print(f"  {k}: {v}")


def main(argv: list[str] | None = None) -> int:
    import argparse

    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--out", help="write cases/ and no-evidence/ under this folder instead of samples/corpus")
    ap.add_argument("--plain", action="store_true", help="write case-NNNN.log uncompressed (for ../shared/eval/score.py)")
    ap.add_argument("--raw-dir", default=str(RAW), help="the recordings (default samples/corpus/raw)")
    ap.add_argument("--plan", help="the plan file the recordings were made from (default samples/corpus/plan.py)")
    args = ap.parse_args(argv)
    by_name = {r.name: r for r in load_plan(args.plan)} if args.plan else BY_NAME
    out_root = Path(args.out) if args.out else HERE
    cases, no_evidence = out_root / "cases", out_root / "no-evidence"
    for d in (cases, no_evidence):
        shutil.rmtree(d, ignore_errors=True)
        d.mkdir(parents=True)
    writer = CaseWriter(cases, no_evidence, args.plain)
    for vi, vdir in enumerate(sorted(Path(args.raw_dir).glob("t*"), key=lambda p: [int(x) for x in p.name[1:].split(".")])):
        if not (vdir / "index.json").exists():
            print(f"skipping {vdir.name}: no index.json (recording not finished)")
            continue
        index = json.loads((vdir / "index.json").read_text())
        torch_v = index["torch"]
        for i, (name, info) in enumerate(sorted(index["recordings"].items())):
            repro = by_name.get(name)
            if repro is None or not (vdir / f"{name}.log.gz").exists():
                continue
            raw = gzip.decompress((vdir / f"{name}.log.gz").read_bytes()).decode("utf-8", "replace")
            text = raw.split("\n", 1)[1] if raw.startswith(HEADER) else raw
            label = base_label(repro, info, text, torch_v)
            lines = text.split("\n")
            if lines and lines[-1] == "":
                lines.pop()
            rng = random.Random(zlib.crc32(f"{torch_v} {name}".encode()))
            fr_full = FRAMED[(i + 3 * vi) % len(FRAMED)]
            fr_frag = FRAMED[(7 * i + 5 * vi + 4) % len(FRAMED)]
            kind = fragment.KINDS[(i + vi) % len(fragment.KINDS)]
            variants = [("plain", "full"), (fr_full, "full"), (fr_frag, kind)]
            for fr, kd in variants:
                framed = framing.frame(fr, lines, rng, repro.fullgraph)
                out = fragment.make(kd, framed, rng)
                lab, ok = finish(label, out, fr, kd)
                writer.write(lab, ok, out, torch_v)
    writer.report()
    return 0


if __name__ == "__main__":
    sys.exit(main())
