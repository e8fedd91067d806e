#!/usr/bin/env python3
"""Re-record the raw sample logs in samples/raw/ from real PyTorch runs.

    python samples/record.py --python /work/venv-torch/bin/python
    python samples/record.py --python /work/venv-torch24/bin/python --prefix t24- --only subprocess,logging-call

Each scenario runs in its own subprocess with cwd = samples/repro, stdout and stderr merged
into one pipe (unbuffered, so the order is what a terminal would show), captured as bytes.
samples/raw/<prefix><name>.log is the first line
    # crashlens sample: recorded by samples/record.py, scenario <name>, torch <v>, python <v>, fullgraph=<bool>
followed by the captured bytes, unaltered.  samples/raw/<prefix>index.toml lists how each was run.
Needs only the standard library here; the target interpreter needs torch.
"""

import argparse
import os
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
REPRO = HERE / "repro"
RAW = HERE / "raw"

# scenario modules under repro/scenarios/ recorded with fullgraph=True;
# (module, log name)
SCENARIOS = [
    ("logging_call", "logging-call"),
    ("print_call", "print-call"),
    ("warnings_warn", "warnings-warn"),
    ("builtin_open", "builtin-open"),
    ("time_call", "time-call"),
    ("random_call", "random-call"),
    ("os_environ_write", "os-environ-write"),
    ("data_dependent_branch", "data-dependent-branch"),
    ("item_scalar", "item-scalar"),
    ("tolist", "tolist"),
    ("generator", "generator"),
    ("observed_exception", "observed-exception"),
    ("module_setattr", "module-setattr"),
    ("hook_registration", "hook-registration"),
    ("context_manager_lock", "context-manager-lock"),
    ("custom_op_define_noimpl", "custom-op-define-noimpl"),
    ("custom_op_nofake", "custom-op-nofake"),
    ("compiler_disable", "compiler-disable"),
    ("namespace_construction", "namespace-construction"),
    ("c_extension_call", "c-extension-call"),
    ("json_call", "json-call"),
    ("skipped_function", "skipped-function"),
    ("dynamo_generic", "dynamo-generic"),
    ("torch_cuda_query", "torch-cuda-query"),
    ("backend_failed", "backend-failed"),
    ("inductor_no_cxx", "inductor-no-cxx"),
    ("explain_print", "explain-print"),  # not a failure: a report the user printed, with one graph break
    ("runtime_error_in_compiled", "runtime-error-in-compiled"),  # a negative: not a dynamo failure
]

# also recorded with fullgraph=False and TORCH_LOGS=graph_breaks, as <name>-gb
GRAPH_BREAK_VARIANTS = [
    "logging_call", "print_call", "warnings_warn", "builtin_open", "time_call",
    "data_dependent_branch", "item_scalar", "tolist", "compiler_disable", "c_extension_call",
]

FP4_ROUNDS = 10  # fp4_rounds.py --round 1..10 (the last one passes)


def build_plan():
    """Yield (name, argv-after-python, extra env, fullgraph)."""
    plan = []
    for mod, name in SCENARIOS:
        plan.append((name, ["run_scenario.py", mod], {}, True))
    for mod, name in SCENARIOS:
        if mod in GRAPH_BREAK_VARIANTS:
            plan.append((f"{name}-gb", ["run_scenario.py", mod, "--no-fullgraph"], {"TORCH_LOGS": "graph_breaks"}, False))
    plan.append(("recompile-limit", ["run_scenario.py", "recompile_limit"], {"TORCH_LOGS": "recompiles"}, True))
    plan.append(("recompile-limit-nofullgraph", ["run_scenario.py", "recompile_limit", "--no-fullgraph"],
                 {"TORCH_LOGS": "recompiles"}, False))
    for n in range(1, FP4_ROUNDS + 1):
        plan.append((f"fp4-round-{n}", ["fp4_rounds.py", "--round", str(n)], {}, True))
    plan.append(("fp4-graph-breaks", ["fp4_rounds.py", "--graph-breaks"], {"TORCH_LOGS": "graph_breaks"}, False))
    # fakeserve start-ups (SGLang-shaped); frame.py wraps these in server log framing
    plan.append(("fakeserve-pcg-fp4", ["-m", "fakeserve.launch_server"], {}, True))
    plan.append(("fakeserve-pcg-bf16", ["-m", "fakeserve.launch_server", "--quantization", "none"], {}, True))
    plan.append(("fakeserve-torch-compile-fp4", ["-m", "fakeserve.launch_server", "--enable-torch-compile", "--torch-compile-max-bs", "2"],
                 {"TORCH_LOGS": "graph_breaks"}, False))
    plan.append(("fakeserve-import-error", ["-m", "fakeserve.launch_server", "--quantization", "mxfp4"], {}, True))
    return plan


def versions(python: str):
    out = subprocess.run(
        [python, "-W", "ignore", "-c", "import sys, torch; print(torch.__version__, sys.version.split()[0])"],
        capture_output=True, text=True, check=True,
    ).stdout.strip().splitlines()[-1]
    torch_v, py_v = out.split()
    return torch_v, py_v


def clean_env(extra):
    env = {k: v for k, v in os.environ.items()
           if not k.startswith(("TORCH_", "TORCHDYNAMO_", "TORCHINDUCTOR_", "FAKEINFER_", "PYTHON"))}
    env.update({"PYTHONUNBUFFERED": "1", "PYTHONDONTWRITEBYTECODE": "1", "PYTHONHASHSEED": "0"})
    env.update(extra)
    return env


def toml_str(s: str) -> str:
    return '"' + s.replace("\\", "\\\\").replace('"', '\\"') + '"'


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--python", required=True, help="interpreter with torch installed")
    ap.add_argument("--prefix", default="", help="prefix for the log names, e.g. t24-")
    ap.add_argument("--only", default="", help="comma-separated scenario names to record (default: all)")
    ap.add_argument("--timeout", type=float, default=300.0)
    args = ap.parse_args()

    torch_v, py_v = versions(args.python)
    plan = build_plan()
    if args.only:
        wanted = {w.strip() for w in args.only.split(",") if w.strip()}
        unknown = wanted - {p[0] for p in plan}
        if unknown:
            ap.error(f"unknown scenario(s): {', '.join(sorted(unknown))}")
        plan = [p for p in plan if p[0] in wanted]
    RAW.mkdir(exist_ok=True)
    index_lines = [
        "# written by samples/record.py: how each raw log was produced (cwd = samples/repro)",
        f"torch = {toml_str(torch_v)}",
        f"python = {toml_str(py_v)}",
        "",
    ]
    for name, argv, extra, fullgraph in plan:
        workspace = tempfile.mkdtemp(prefix="crashlens-rec-")
        env = clean_env(dict(extra, FAKEINFER_WORKSPACE_BASE=workspace))
        t0 = time.time()
        try:
            proc = subprocess.run([args.python, *argv], cwd=REPRO, env=env, stdout=subprocess.PIPE,
                                  stderr=subprocess.STDOUT, timeout=args.timeout)
            output, rc = proc.stdout, proc.returncode
        except subprocess.TimeoutExpired as e:
            output, rc = (e.stdout or b""), "timeout"
        finally:
            shutil.rmtree(workspace, ignore_errors=True)
        header = (f"# crashlens sample: recorded by samples/record.py, scenario {name}, torch {torch_v}, "
                  f"python {py_v}, fullgraph={fullgraph}\n").encode()
        out_path = RAW / f"{args.prefix}{name}.log"
        out_path.write_bytes(header + output)
        print(f"{out_path.relative_to(HERE.parent)}: rc={rc} {len(output)} bytes {time.time() - t0:.1f}s", flush=True)
        index_lines += [
            f"[{toml_str(args.prefix + name)}]",
            f"argv = [{', '.join(toml_str(a) for a in ['python', *argv])}]",
            f"env = {{{', '.join(f'{k} = {toml_str(v)}' for k, v in sorted(extra.items()))}}}",
            f"fullgraph = {'true' if fullgraph else 'false'}",
            f"exit_code = {rc if isinstance(rc, int) else toml_str(rc)}",
            "",
        ]
    if not args.only or args.prefix:
        (RAW / f"{args.prefix}index.toml").write_text("\n".join(index_lines))
    else:
        print("(--only given without --prefix: index.toml not rewritten)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
