"""Do crashlens's fixes make the reproducers compile, with eager's output? (needs torch; not a unit test)

    python benchmarks/verify_fixes.py --python /path/to/venv/bin/python [--python ...] [--case NAME ...]
                                      [--set repro|heldout|heldout2|heldout3|heldout4|heldout5|heldout6] [--json FILE]

For every reproducer in samples/repro (each crash scenario, the FP4 chain `fp4_rounds.py --round 1`, and
each model in samples/repro/models/; with `--set heldout` (or `heldout2` ... `heldout6`) each model in
samples/repro/heldout/ (heldout2/ ... heldout6/), written apart from the ones the fixes were developed on) and
each torch given by an interpreter:
  1. a fresh copy of samples/repro; the eager reference: the command with TORCHDYNAMO_DISABLE=1;
  2. `crashlens run --fix --format json -- CMD` in the copy, with that interpreter first on PATH;
  3. when it converged, the last round's output must equal eager's;
  4. `crashlens fix --revert`: the copy must be byte for byte the original again (and untouched when
     the program fails in eager too).
Prints one row per case and torch: converged, rounds, fixes, needs-a-person, output equal to eager.
"""

from __future__ import annotations

import argparse
import hashlib
import json
import os
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
REPRO = ROOT / "samples" / "repro"


def cases(which: str = "repro") -> dict[str, list[str]]:
    out: dict[str, list[str]] = {}
    if which in ("heldout", "heldout2", "heldout3", "heldout4", "heldout5", "heldout6"):
        for p in sorted((REPRO / which).glob("*.py")):
            if not p.name.startswith("_"):
                out[f"{which}/{p.stem}"] = ["python", f"{which}/{p.name}"]
        return out
    out["fp4_rounds"] = ["python", "fp4_rounds.py", "--round", "1"]
    for p in sorted((REPRO / "models").glob("*.py")) if (REPRO / "models").is_dir() else []:
        if not p.name.startswith("_"):
            out[f"models/{p.stem}"] = ["python", f"models/{p.name}"]
    for p in sorted((REPRO / "scenarios").glob("*.py")):
        if not p.name.startswith("_"):
            # the scenarios draw their inputs unseeded: seed them, so that eager and compiled runs compare
            out[p.stem] = ["python", "-c", _SEEDED.format(name=p.stem)]
    return out


_SEEDED = ("import runpy, sys, torch; torch.manual_seed(0); sys.argv = ['run_scenario.py', '{name}']; "
           "runpy.run_path('run_scenario.py', run_name='__main__')")


def digest(root: Path) -> dict[str, str]:
    return {str(p.relative_to(root)): hashlib.sha256(p.read_bytes()).hexdigest()
            for p in sorted(root.rglob("*")) if p.is_file() and "__pycache__" not in p.parts}


def crashlens() -> list[str]:
    exe = Path(sys.executable).parent / "crashlens"
    return [str(exe)] if exe.exists() else [sys.executable, "-c", "from crashlens.cli import main; main()"]


def run(cmd: list[str], cwd: Path, env: dict[str, str], timeout: float = 600) -> subprocess.CompletedProcess[str]:
    return subprocess.run(cmd, cwd=cwd, env=env, capture_output=True, text=True, timeout=timeout)


def result_lines(text: str) -> list[str]:
    """What the program computed: its own result lines, not torch's warnings or log noise."""
    keep = ("compiled run finished:", "compiled fp4 path ran:", "decode loop finished:", "result:")
    return [ln.strip() for ln in text.splitlines() if ln.strip().startswith(keep)]


def verify(name: str, argv: list[str], python: str) -> dict[str, object]:
    bindir = str(Path(python).parent)
    env = {**os.environ, "PATH": bindir + os.pathsep + os.environ.get("PATH", ""), "PYTHONHASHSEED": "0"}
    env.pop("TORCHDYNAMO_DISABLE", None)
    with tempfile.TemporaryDirectory(prefix="crashlens-verify-") as tmp:
        work = Path(tmp) / "repro"
        shutil.copytree(REPRO, work, ignore=shutil.ignore_patterns("__pycache__"))
        before = digest(work)
        eager = run(argv, work, {**env, "TORCHDYNAMO_DISABLE": "1"})
        t0 = time.perf_counter()
        p = run([*crashlens(), "run", "--fix", "--format", "json", "--", *argv], work, env, timeout=1800)
        seconds = time.perf_counter() - t0
        try:
            trail = json.loads(p.stdout)
        except ValueError:
            return {"case": name, "error": f"crashlens run printed no trail (exit {p.returncode}): {p.stderr[-300:]}"}
        rounds = trail["rounds"]
        fixes = [r["fix"]["kind"] for r in rounds if r.get("fix")]
        converged = trail["exit_code"] == 0
        row: dict[str, object] = {
            "case": name, "eager_ok": eager.returncode == 0, "crashes_compiled": rounds[0]["exit_code"] != 0,
            "converged": converged, "rounds": len(fixes), "fixes": fixes,
            "needs_a_person": rounds[-1]["outcome"] == "needs-a-person",
            "reason": rounds[-1].get("reason", ""), "seconds": round(seconds, 1),
        }
        if converged:
            # the last round's output: what the command printed after crashlens's last round note
            last = p.stderr.rsplit(f"crashlens run: round {len(rounds)}: ", 1)[-1]
            row["output_equal"] = result_lines(last) == result_lines(eager.stdout) and bool(result_lines(eager.stdout))
        row["untouched_when_eager_fails"] = (digest(work) == before) if eager.returncode != 0 else None
        rv = run([*crashlens(), "fix", "--revert"], work, env)
        row["reverted"] = rv.returncode == 0 and digest(work) == before
        return row


def torch_version(python: str) -> str:
    p = subprocess.run([python, "-c", "import torch; print(torch.__version__)"], capture_output=True, text=True)
    return p.stdout.strip() or "?"


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--python", action="append", required=True, help="an interpreter with torch (repeat)")
    ap.add_argument("--case", action="append", help="only these cases")
    ap.add_argument("--set", dest="which", choices=["repro", "heldout", "heldout2", "heldout3", "heldout4", "heldout5", "heldout6"], default="repro",
                    help="heldout, heldout2 ... heldout6: the models in samples/repro/<set>/ (default: the development reproducers)")
    ap.add_argument("--json", help="write the rows here too")
    args = ap.parse_args()
    all_cases = cases(args.which)
    chosen = {k: v for k, v in all_cases.items() if not args.case or k in args.case}
    rows = []
    for python in args.python:
        tv = torch_version(python)
        for name, argv in chosen.items():
            row = verify(name, argv, python)
            row["torch"] = tv
            rows.append(row)
            print(json.dumps(row), file=sys.stderr, flush=True)
    print("| case | torch | fails eager | converged | fixes | output = eager | needs a person | reverted |")
    print("|---|---|---|---|---|---|---|---|")
    for r in rows:
        if "error" in r:
            print(f"| {r['case']} | {r['torch']} | | ERROR: {r['error'][:80]} | | | | |")
            continue
        print(f"| {r['case']} | {r['torch']} | {'yes' if not r['eager_ok'] else ''} | "
              f"{'yes' if r['converged'] else 'no'} | {', '.join(r['fixes']) or '-'} | "
              f"{'yes' if r.get('output_equal') else ('no' if r['converged'] else '')} | "
              f"{'yes' if r['needs_a_person'] else ''} | {'yes' if r['reverted'] else 'NO'} |")
    by_torch: dict[str, list[dict[str, object]]] = {}
    for r in rows:
        by_torch.setdefault(str(r["torch"]), []).append(r)
    for tv, rs in by_torch.items():
        compile_only = [r for r in rs if r.get("eager_ok") and r.get("crashes_compiled")]
        good = [r for r in compile_only if r.get("converged") and r.get("output_equal")]
        one = [r for r in good if r.get("rounds") == 1]
        eager_fail = [r for r in rs if r.get("eager_ok") is False]
        untouched = [r for r in eager_fail if r.get("untouched_when_eager_fails")]
        print(f"\ntorch {tv}: converged with eager's output on {len(good)}/{len(compile_only)} failures that happen "
              f"only under compile ({len(one)} after one fix); programs failing in eager too left untouched: "
              f"{len(untouched)}/{len(eager_fail)}; reverted byte for byte: "
              f"{sum(1 for r in rs if r.get('reverted'))}/{len(rs)}")
    if args.json:
        Path(args.json).write_text(json.dumps(rows, indent=1))
    return 0


if __name__ == "__main__":
    sys.exit(main())
