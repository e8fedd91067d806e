#!/usr/bin/env python3
"""Score crashlens on the recorded corpus, in-process, per torch release, framing and fragment kind.

    python samples/corpus/score.py                    # the table
    python samples/corpus/score.py -v                 # and one line per case that is not right
    python samples/corpus/score.py --write-baseline   # commit the figures as samples/corpus/baseline.json
    python samples/corpus/score.py samples/corpus-heldout/cases --baseline samples/corpus-heldout/baseline.json \
        --no-evidence samples/corpus-heldout/no-evidence            # another corpus built by build.py --out

Same rules as ../shared/eval/score.py (the dev corpus's scorer): a case is detected when crashlens reports
a `dynamo`-family diagnosis; the culprit must be the top diagnosis's culprit (file suffix + line); the first
fix of the top diagnosis must name one of `accepted_fix_keywords`; on a case that is not a dynamo failure,
any dynamo diagnosis is a false alarm, or only a fatal one where `dynamo_warnings_ok`.  One more figure,
lower is better: of the cases that hold one crash, how many get more than one fatal report (of any family:
a re-raise, a rank's copy or a cut copy of the crash is the same crash, never a second report).  A recorded
case holds one crash when its run died of one uncaught exception chain (`outcome`, written by the run
itself); a paste's label names at most one failure when it is a fatal dynamo failure without a `culprits`
list (pastes record no outcome, so that is all their labels allow).  Cases are cases/case-NNNN.log.gz +
.json; no-evidence/ fragments are scored neither way, only counted.
Importable: `score(folder)` returns the counts, `regressions(counts, baseline)` the figures that dropped.
"""

from __future__ import annotations

import argparse
import gzip
import json
import sys
from pathlib import Path

HERE = Path(__file__).resolve().parent
CASES = HERE / "cases"
NO_EVIDENCE = HERE / "no-evidence"
BASELINE = HERE / "baseline.json"

# (numerator, denominator) per figure; false alarms and multi_fatal are "lower is better"
FIGURES = {"detect": ("detect", "pos"), "culprit": ("culprit", "culprit_cases"), "fix@1": ("fix1", "fix_cases"),
           "false_alarm": ("false_alarm", "neg"), "multi_fatal": ("multi_fatal", "one_crash")}
LOWER_IS_BETTER = ("false_alarm", "multi_fatal")


def _all_diagnoses(log: Path) -> list[dict]:
    from crashlens.cli.scan import run_scan
    from crashlens.render.json import document

    return document(run_scan((str(log),), (), audit=False, jobs=1))["diagnoses"]


def _dynamo(diags: list[dict]) -> list[dict]:
    return [d for d in diags if d.get("family") == "dynamo"]


def _diagnose(log: Path) -> list[dict]:
    return _dynamo(_all_diagnoses(log))


def holds_one_crash(label: dict) -> bool:
    """Whether the case holds exactly one crash, by its label (never by crashlens's output)."""
    outcome = label.get("outcome")
    if outcome is not None:  # a recording: the run itself wrote the exception chain it died of
        return bool(outcome.get("exit_code")) and bool(outcome.get("exception_chain"))
    return bool(label.get("is_dynamo_failure")) and not label.get("dynamo_warnings_ok") \
        and not label.get("culprits")


def _frame_ok(found: dict | None, want: dict) -> bool:
    return bool(found) and str(found.get("file") or "").replace("\\", "/").endswith(want["file_suffix"]) \
        and found.get("line") == want["line"]


def _accepted(fixes: list[dict], keywords: list[str]) -> bool:
    text = " ".join(" ".join(str(f.get(k) or "") for k in ("title", "detail", "patch")) for f in fixes).lower()
    return any(k.lower() in text for k in keywords)


def judge(label: dict, diags: list[dict], fatal_reports: int | None = None) -> dict[str, int]:
    """The counts one case adds, and a note on what went wrong (for -v).

    `diags` are the dynamo diagnoses; `fatal_reports` the number of fatal diagnoses of any family (counted
    from `diags` when not given)."""
    c = dict.fromkeys(("pos", "detect", "culprit_cases", "culprit", "fix_cases", "fix1", "neg", "false_alarm",
                       "one_crash", "multi_fatal"), 0)
    notes = []
    if fatal_reports is None:
        fatal_reports = sum(bool(d.get("fatal", True)) for d in diags)
    if holds_one_crash(label):
        c["one_crash"] = 1
        c["multi_fatal"] = int(fatal_reports > 1)
        if fatal_reports > 1:
            notes.append(f"ONE CRASH, {fatal_reports} fatal reports")
    if label.get("is_dynamo_failure"):
        c["pos"] = 1
        c["detect"] = int(bool(diags))
        if not diags:
            notes.append("MISSED")
        want = label.get("culprit")
        if want and want.get("file_suffix") and want.get("line"):
            c["culprit_cases"] = 1
            c["culprit"] = int(bool(diags) and _frame_ok(diags[0].get("culprit"), want))
            if diags and not c["culprit"]:
                got = diags[0].get("culprit") or {}
                notes.append(f"culprit want {want['file_suffix']}:{want['line']} got {got.get('file')}:{got.get('line')}")
        if label.get("accepted_fix_keywords"):
            c["fix_cases"] = 1
            c["fix1"] = int(bool(diags) and _accepted((diags[0].get("fixes") or [])[:1], label["accepted_fix_keywords"]))
            if diags and not c["fix1"]:
                first = (diags[0].get("fixes") or [{}])[0]
                notes.append(f"fix@1 no: {str(first.get('title'))[:90]!r}")
    else:
        c["neg"] = 1
        wrong = [d for d in diags if d.get("fatal", True)] if label.get("dynamo_warnings_ok") else diags
        c["false_alarm"] = int(bool(wrong))
        if wrong:
            notes.append(f"FALSE ALARM {wrong[0].get('signature')}: {str(wrong[0].get('title'))[:80]!r}")
    c["_notes"] = notes  # type: ignore[assignment]
    return c


def groups_of(label: dict) -> list[str]:
    v = str(label.get("torch_version") or "?").split("+")[0]
    return ["all", f"torch {'.'.join(v.split('.')[:2])}", f"framing {label.get('framing')}",
            f"fragment {label.get('fragment')}"]


def score(folder: Path = CASES, verbose: bool = False, out=sys.stdout) -> dict[str, dict[str, int]]:
    counts: dict[str, dict[str, int]] = {}
    for label_path in sorted(folder.glob("case-*.json")):
        label = json.loads(label_path.read_text())
        log = label_path.with_suffix(".log.gz")
        if not log.exists():
            log = label_path.with_suffix(".log")
        diags = _all_diagnoses(log)
        c = judge(label, _dynamo(diags), sum(bool(d.get("fatal", True)) for d in diags))
        notes = c.pop("_notes")
        if verbose and notes:
            print(f"{log.name} [{label.get('torch_version')} {label.get('repro')} {label.get('framing')}/"
                  f"{label.get('fragment')}]: " + "; ".join(notes), file=out)  # type: ignore[arg-type]
        for g in groups_of(label):
            tgt = counts.setdefault(g, dict.fromkeys(c, 0))
            for k, v in c.items():
                tgt[k] += v
    return counts


def no_evidence_reports(folder: Path = NO_EVIDENCE) -> tuple[int, int]:
    """(fragments, fragments on which crashlens still reported a fatal dynamo crash): information only."""
    paths = sorted(folder.glob("none-*.json"))
    fatal = 0
    for p in paths:
        log = p.with_suffix(".log.gz")
        fatal += any(d.get("fatal", True) for d in _diagnose(log if log.exists() else p.with_suffix(".log")))
    return len(paths), fatal


def rate(c: dict[str, int], fig: str) -> float | None:
    num, den = FIGURES[fig]
    return c[num] / c[den] if c.get(den) else None


def table(counts: dict[str, dict[str, int]]) -> str:
    def cell(c, fig):
        num, den = FIGURES[fig]
        return f"{c[num]}/{c[den]} ({100 * c[num] / c[den]:.0f}%)" if c.get(den) else "-"
    rows = ["| set | cases | detected | culprit right | first fix accepted | false alarms "
            "| one crash, >1 fatal report |", "|---|---|---|---|---|---|---|"]
    def key(g: str):
        kind, _, rest = g.partition(" ")
        ver = [int(p) for p in rest.split(".")] if kind == "torch" and rest.replace(".", "").isdigit() else []
        return (g != "all", kind != "torch", kind != "framing", ver, g)
    order = sorted(counts, key=key)
    for g in order:
        c = counts[g]
        rows.append(f"| {g} | {c['pos'] + c['neg']} | {cell(c, 'detect')} | {cell(c, 'culprit')} | "
                    f"{cell(c, 'fix@1')} | {cell(c, 'false_alarm')} | {cell(c, 'multi_fatal')} |")
    return "\n".join(rows)


def regressions(counts: dict[str, dict[str, int]], baseline: dict[str, dict[str, int]]) -> list[str]:
    """Every figure of the baseline that is now worse (a lower rate, or more false alarms)."""
    bad = []
    for g, base in baseline.items():
        now = counts.get(g)
        if now is None:
            bad.append(f"{g}: group missing from the corpus")
            continue
        for fig in FIGURES:
            b, n = rate(base, fig), rate(now, fig)
            if b is None:
                continue
            if n is None:
                bad.append(f"{g} {fig}: no cases now (baseline {b:.3f})")
            elif (fig in LOWER_IS_BETTER and n > b + 1e-9) or (fig not in LOWER_IS_BETTER and n < b - 1e-9):
                num, den = FIGURES[fig]
                bad.append(f"{g} {fig}: {now[num]}/{now[den]} = {n:.3f}, baseline {base[num]}/{base[den]} = {b:.3f}")
    return bad


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("folder", nargs="?", default=str(CASES))
    ap.add_argument("-v", "--verbose", action="store_true")
    ap.add_argument("--write-baseline", action="store_true")
    ap.add_argument("--baseline", default=str(BASELINE), help="the baseline to hold or write (default samples/corpus/baseline.json)")
    ap.add_argument("--no-evidence", default=str(NO_EVIDENCE), help="the no-evidence fragments (default samples/corpus/no-evidence)")
    args = ap.parse_args()
    baseline_path = Path(args.baseline)
    counts = score(Path(args.folder), verbose=args.verbose)
    print(table(counts))
    n, fatal = no_evidence_reports(Path(args.no_evidence))
    print(f"\nno-evidence fragments (not scored): {n}; crashlens reported a fatal dynamo crash on {fatal}")
    if args.write_baseline:
        baseline_path.write_text(json.dumps(counts, indent=1, sort_keys=True) + "\n")
        print(f"wrote {baseline_path}")
    elif baseline_path.exists():
        bad = regressions(counts, json.loads(baseline_path.read_text()))
        print("\nbelow the baseline:\n  " + "\n  ".join(bad) if bad else "\nno figure below the baseline")
        return 1 if bad else 0
    return 0


if __name__ == "__main__":
    sys.exit(main())
