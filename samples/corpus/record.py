#!/usr/bin/env python3
"""Record every reproducer of samples/corpus/plan.py under one torch release, from real runs.

    python samples/corpus/record.py --torch 2.13.0                 # uses /work/venvs/t2.13.0 if present
    python samples/corpus/record.py --torch 2.1.2 --venv DIR       # or creates DIR: pip install torch==2.1.2
    python samples/corpus/record.py --torch 2.4.1 --only logging-call,fp4-round-3 -j 2
    python samples/corpus/record.py --torch 2.7.1 --plan samples/corpus-heldout/plan.py --raw-dir samples/corpus-heldout/raw

Each program runs in its own subprocess, cwd = samples/repro, stdout+stderr merged in one unbuffered
pipe and kept byte for byte in samples/corpus/raw/t<version>/<name>.log.gz, after one header line
    # crashlens corpus recording: samples/corpus/record.py, <name>, torch <v>, python <v>, fullgraph=<bool>
raw/t<version>/index.json keeps, per recording, the argv, environment, exit code and the exception
chain the run raised (written by hook/sitecustomize.py from sys.excepthook, so the label comes from
the run).  Standard library only; the target interpreter needs torch.
"""

from __future__ import annotations

import argparse
import gzip
import json
import os
import shutil
import subprocess
import sys
import tempfile
import threading
import time
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

HERE = Path(__file__).resolve().parent
REPRO = HERE.parent / "repro"
RAW = HERE / "raw"
HOOK = HERE / "hook"
sys.path.insert(0, str(HERE))

from plan import Repro, load_plan  # noqa: E402

VENV_ROOTS = [Path("/work/venvs"), Path.home() / ".cache" / "crashlens-corpus" / "venvs"]


def find_or_create_venv(version: str, venv: str | None) -> Path:
    """The interpreter of a venv with torch==version; created (pip install torch==version) if missing."""
    if venv:
        root = Path(venv)
    else:
        root = next((r / f"t{version}" for r in VENV_ROOTS if (r / f"t{version}" / "bin" / "python").exists()),
                    VENV_ROOTS[-1] / f"t{version}")
    py = root / "bin" / "python"
    if not py.exists():
        print(f"creating {root} (pip install torch=={version}) ...", flush=True)
        subprocess.run([sys.executable, "-m", "venv", str(root)], check=True)
        numpy = "numpy<2" if tuple(int(p) for p in version.split(".")[:2]) < (2, 3) else "numpy"
        subprocess.run([str(py), "-m", "pip", "install", "-q", f"torch=={version}", numpy], check=True)
    return py


def versions(python: Path) -> tuple[str, str]:
    out = subprocess.run(
        [str(python), "-W", "ignore", "-c", "import sys, torch; print(torch.__version__, sys.version.split()[0])"],
        capture_output=True, text=True, check=True,
    ).stdout.strip().splitlines()[-1]
    torch_v, py_v = out.split()
    return torch_v, py_v


def clean_env(extra: dict[str, str], outcome: str, workspace: str) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items()
           if not k.startswith(("TORCH_", "TORCHDYNAMO_", "TORCHINDUCTOR_", "FAKEINFER_", "FAKESERVE_", "PYTHON",
                                "CRASHLENS_"))}
    env.update({"PYTHONUNBUFFERED": "1", "PYTHONDONTWRITEBYTECODE": "1", "PYTHONHASHSEED": "0",
                "PYTHONPATH": str(HOOK), "CRASHLENS_OUTCOME": outcome, "FAKEINFER_WORKSPACE_BASE": workspace,
                "OMP_NUM_THREADS": "1"})
    env.update(extra)
    return env


def record_one(python: Path, torch_v: str, py_v: str, repro: Repro, out_dir: Path, timeout: float) -> dict:
    workspace = tempfile.mkdtemp(prefix="crashlens-corpus-")
    outcome_path = os.path.join(workspace, "outcome.json")
    env = clean_env(repro.env, outcome_path, workspace)
    t0 = time.time()
    try:
        proc = subprocess.run([str(python), *repro.argv], cwd=REPRO, env=env, stdout=subprocess.PIPE,
                              stderr=subprocess.STDOUT, timeout=timeout)
        output, rc = proc.stdout, proc.returncode
    except subprocess.TimeoutExpired as e:
        output, rc = (e.stdout or b""), "timeout"
    try:
        chain = json.loads(Path(outcome_path).read_text())["exception_chain"]
    except (OSError, ValueError, KeyError):
        chain = []
    shutil.rmtree(workspace, ignore_errors=True)
    header = (f"# crashlens corpus recording: samples/corpus/record.py, {repro.name}, torch {torch_v}, "
              f"python {py_v}, fullgraph={repro.fullgraph}\n").encode()
    (out_dir / f"{repro.name}.log.gz").write_bytes(gzip.compress(header + output, mtime=0))
    print(f"{out_dir.name}/{repro.name}: rc={rc} {len(output)} bytes {time.time() - t0:.1f}s "
          f"{chain[:1] or ''}", flush=True)
    return {"argv": ["python", *repro.argv], "env": repro.env, "fullgraph": repro.fullgraph, "exit_code": rc,
            "exception_chain": chain}


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--torch", required=True, help="torch release, e.g. 2.13.0")
    ap.add_argument("--venv", help="venv to use or create (default: /work/venvs/t<version>, else ~/.cache/crashlens-corpus/venvs/)")
    ap.add_argument("--only", default="", help="comma-separated recording names (default: all)")
    ap.add_argument("-j", "--jobs", type=int, default=2, help="torch processes at once (default 2)")
    ap.add_argument("--timeout", type=float, default=300.0)
    ap.add_argument("--raw-dir", default=str(RAW), help="where t<version>/ goes (default samples/corpus/raw)")
    ap.add_argument("--plan", help="a plan file with its own REPROS (default samples/corpus/plan.py)")
    args = ap.parse_args()
    repros = load_plan(args.plan)

    python = find_or_create_venv(args.torch, args.venv)
    torch_v, py_v = versions(python)
    major_minor = tuple(int(p) for p in args.torch.split(".")[:2])
    plan = [r for r in repros if major_minor >= r.min_torch]
    if args.only:
        wanted = {w.strip() for w in args.only.split(",") if w.strip()}
        unknown = wanted - {r.name for r in repros}
        if unknown:
            ap.error(f"unknown recording(s): {', '.join(sorted(unknown))}")
        plan = [r for r in plan if r.name in wanted]
    # the FP4 rounds and the warning-only runs last: an interrupted recording keeps the crashes of every family
    plan.sort(key=lambda r: (r.name.startswith("fp4-") or r.name.endswith("-gb")))
    out_dir = Path(args.raw_dir) / f"t{args.torch}"
    out_dir.mkdir(parents=True, exist_ok=True)
    index_path = out_dir / "index.json"
    index = json.loads(index_path.read_text()) if index_path.exists() else {}
    index.update({"torch": torch_v, "python": py_v})
    recs = index.setdefault("recordings", {})
    lock = threading.Lock()

    def run(repro: Repro) -> None:
        info = record_one(python, torch_v, py_v, repro, out_dir, args.timeout)
        with lock:  # the index is rewritten after each recording, so an interrupted run keeps what it made
            recs[repro.name] = info
            index["recordings"] = dict(sorted(recs.items()))
            index_path.write_text(json.dumps(index, indent=1) + "\n")

    with ThreadPoolExecutor(max_workers=max(1, args.jobs)) as pool:
        results = list(pool.map(run, plan))
    print(f"{len(results)} recordings in {out_dir}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
