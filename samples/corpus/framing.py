"""Hand-written log framing around real recordings: how a server, launcher or test runner prints them.

Everything this module writes is framing typed by hand (start-up lines, prefixes, re-raise messages,
engine-side tracebacks with invented line numbers), modelled on ../shared/research/serving-stacks.md
and log-text-2025-2026.md.  The torch output inside (warnings, tracebacks, dynamo messages) is the
recording, verbatim.  Every function takes the recording's lines and a seeded random generator and
returns the framed lines (each with its own line end).  Building blocks come from samples/frame.py.
"""

from __future__ import annotations

import random
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from frame import (  # noqa: E402
    COMPILING_BAR, PCG_HINT, SIGQUIT, Clock, exception_message, pcg_failure_records, sg, sglang_ready,
    sglang_startup, split_writes, vllm_record, warning_blocks,
)

Lines = list[tuple[str, str]]  # (line, line end)


def split(lines: list[str]) -> tuple[list[str], list[str]]:
    """(lines before the first traceback, the traceback report); the report is [] for a run that went on."""
    for i, line in enumerate(lines):
        if line.startswith("Traceback (most recent call last):"):
            return lines[:i], lines[i:]
    return lines, []


def message(tb: list[str]) -> list[str]:
    try:
        return exception_message(tb) or tb[-1:] or [""]
    except (ValueError, IndexError):
        return tb[-1:] or [""]


def _nl(lines: list[str], end: str = "\n") -> Lines:
    return [(line, end) for line in lines]


# ---------------------------------------------------------------------------------------------- SGLang

CUDA_GRAPH_CAPTURE_FAILED_MSG = [
    "Possible solutions:",
    "1. set --mem-fraction-static to a smaller value (e.g., 0.8 or 0.7)",
    "2. set --cuda-graph-max-bs to a smaller value (e.g., 16)",
    "3. disable torch compile by not using --enable-torch-compile",
    "4. disable CUDA graph by --disable-cuda-graph. (Not recommended. Huge performance loss)",
    "Open an issue on GitHub https://github.com/sgl-project/sglang/issues/new/choose ",
]

SGL = "/usr/local/lib/python3.12/dist-packages/sglang/srt"


def _capture_reraise(tb: list[str]) -> list[str]:
    """SGLang's decode CUDA-graph runner re-raising a compile error (--enable-torch-compile, no PCG)."""
    msg = message(tb)
    return tb + ["", "During handling of the above exception, another exception occurred:", "",
                 "Traceback (most recent call last):",
                 f'  File "{SGL}/managers/scheduler.py", line 3612, in run_scheduler_process',
                 "    scheduler = Scheduler(server_args, port_args, gpu_id, tp_rank, moe_ep_rank, pp_rank, dp_rank)",
                 f'  File "{SGL}/model_executor/model_runner.py", line 2231, in init_device_graphs',
                 "    self.graph_runner = graph_runners[self.device](self)",
                 f'  File "{SGL}/model_executor/cuda_graph_runner.py", line 391, in __init__',
                 "    raise Exception(",
                 "Exception: Capture cuda graph failed: " + msg[0]] + msg[1:] + CUDA_GRAPH_CAPTURE_FAILED_MSG


def sglang(lines: list[str], rng: random.Random, tp: int, fullgraph: bool) -> Lines:
    pre, tb = split(lines)
    clock = Clock(f"2026-0{rng.randint(3, 9)}-{rng.randint(10, 28)} {rng.randint(10, 23)}:{rng.randint(10, 59)}:07")
    model = rng.choice(["nvidia/Llama-3.1-8B-Instruct-NVFP4", "Qwen/Qwen3-30B-A3B", "meta-llama/Llama-3.3-70B-Instruct"])
    out = sglang_startup(clock, model, tp, enable_torch_compile=not fullgraph, upto="pcg" if fullgraph else "cuda-graph")
    ranks = [None] if tp == 1 else list(range(tp))
    warns = warning_blocks(pre) if pre else []
    out.append("".join(COMPILING_BAR for _ in ranks).lstrip("\r") if tp == 1 else "".join(COMPILING_BAR for _ in ranks))
    ts = clock.tick(9)
    if not tb:
        for _ in ranks[: min(tp, 2)]:
            for w in warns:
                out += w
        out += sglang_ready(clock)
        return _nl(out)
    queues = {}
    for r in ranks:
        if fullgraph:
            pcg, sched = pcg_failure_records(ts, r, message(tb), tb)
        else:
            pcg, sched = [], [sg(ts, "Scheduler hit an exception: " + tb[0], r)] + _capture_reraise(tb)[1:] + [""]
        queues[r] = [list(w) for w in warns] + ([pcg] if pcg else []) + (split_writes(sched) if tp > 2 else [sched])
    if tp <= 2:
        for r in ranks:
            for piece in queues[r]:
                out += piece
    else:
        while any(queues.values()):
            r = rng.choice([k for k, q in queues.items() if q])
            out += queues[r].pop(0)
    out.append(sg(clock.tick(), SIGQUIT))
    return _nl(out)


# ---------------------------------------------------------------------------------------------- vLLM

VLLM = "/usr/local/lib/python3.12/dist-packages/vllm"


def _engine_tb(msg: list[str]) -> list[str]:
    return [
        "EngineCore failed to start.",
        "Traceback (most recent call last):",
        f'  File "{VLLM}/v1/engine/core.py", line 699, in run_engine_core',
        "    engine_core = EngineCoreProc(*args, **kwargs)",
        f'  File "{VLLM}/v1/engine/core.py", line 190, in _initialize_kv_caches',
        "    self.model_executor.determine_available_memory())",
        f'  File "{VLLM}/v1/executor/multiproc_executor.py", line 264, in collective_rpc',
        "    result = get_response(w, dequeue_timeout,",
        f'  File "{VLLM}/v1/executor/multiproc_executor.py", line 248, in get_response',
        "    raise RuntimeError(",
        "RuntimeError: Worker failed with error '" + msg[0],
    ] + msg[1:] + ["', please check the stack trace above for the root cause"]


def vllm(lines: list[str], rng: random.Random, new: bool) -> Lines:
    """vLLM with TP=2: old (≤0.9, `(VllmWorker rank=N pid=P)`, [file.py:N]) or new (0.11+, `(Worker_TPn pid=P)`)."""
    pre, tb = split(lines)
    base = rng.randint(1000, 90000)
    if new:
        workers = [(f"Worker_TP{i}", base + 10 + i) for i in range(2)]
        core, api, ver, where = ("EngineCore_DP0", base + 2), ("APIServer", base), "0.11.0", "multiproc_executor.py:671"
    else:
        workers = [(f"VllmWorker rank={i}", base + 10 + i) for i in range(2)]
        core, api, ver, where = ("EngineCore_0", base + 2), ("APIServer", base), "0.9.2", "multiproc_executor.py:522"
    day = f"{rng.randint(1, 12):02d}-{rng.randint(10, 28):02d}"
    out: Lines = []

    def rec(proc, level, hms, fileinfo, msg_lines):
        ls, es = vllm_record(proc[0], proc[1], level, f"{day} {hms}", fileinfo, msg_lines)
        out.extend(zip(ls, es))

    rec(api, "INFO", "10:21:47", "api_server.py:1839", [f"vLLM API server version {ver}"])
    rec(core, "INFO", "10:22:01", "core.py:77", [f"Initializing a V1 LLM engine (v{ver}) with config: "
                                                 "model='Qwen/Qwen3-8B', tensor_parallel_size=2, enforce_eager=False, "
                                                 'compilation_config={"level":3,"cudagraph_mode":[2,1]}'])
    for i, w in enumerate(workers):
        rec(w, "INFO", "10:22:31", "backends.py:548", [
            f"Using cache directory: /root/.cache/vllm/torch_compile_cache/7b1c2f6e3d/rank_{i}_0/backbone "
            "for vLLM's torch.compile"])
    for w in workers:
        out.extend((f"({w[0]} pid={w[1]}) {line}", "\n") for line in pre)
    if not tb:
        rec(core, "INFO", "10:23:02", "monitor.py:34", ["torch.compile takes 24.61 s in total"])
        rec(api, "INFO", "10:23:40", "api_server.py:1971", ["Starting vLLM API server 0 on http://0.0.0.0:8000"])
        return out
    for w in reversed(workers):
        rec(w, "ERROR", "10:22:33", where, ["WorkerProc hit an exception."] + tb)
    rec(core, "ERROR", "10:22:34", "core.py:708", _engine_tb(message(tb)))
    out.extend((f"(APIServer pid={api[1]}) {line}", "\n") for line in [
        "Traceback (most recent call last):",
        f'  File "{VLLM}/v1/engine/utils.py", line 880, in wait_for_engine_startup',
        "    raise RuntimeError(\"Engine core initialization failed. \"",
        "RuntimeError: Engine core initialization failed. See root cause above. Failed core proc(s): {}"])
    return out


# ---------------------------------------------------------------------------------------------- launchers

def ray(lines: list[str], rng: random.Random) -> Lines:
    """Ray actor output: every line `(Name pid=P, ip=A) `, then the driver's RayTaskError re-raise."""
    pre, tb = split(lines)
    pid, ip = rng.randint(2000, 60000), f"10.{rng.randint(0, 255)}.{rng.randint(0, 255)}.{rng.randint(2, 250)}"
    actor = rng.choice(["RayWorkerWrapper", "ModelRunnerActor", "ServeReplica:llm:LLMDeployment"])
    tag = f"({actor} pid={pid}, ip={ip}) "
    out = _nl([tag + line for line in pre + tb])
    if tb:
        msg = message(tb)
        exc = tb[-len(msg)] if len(msg) <= len(tb) else tb[-1]
        exc_type = exc.split(":", 1)[0].rsplit(".", 1)[-1]
        out += _nl([
            "Traceback (most recent call last):",
            '  File "/app/serve.py", line 41, in <module>',
            "    ray.get([w.execute_method.remote('load_model') for w in workers])",
            f"ray.exceptions.RayTaskError({exc_type}): ray::{actor.split(':')[0]}.execute_method() "
            f"(pid={pid}, ip={ip}, actor_id=8f3c1e2a9b7d6c5e4f3a2b1c01000000, repr=<{actor} object at 0x7f3a2c1b9d50>)",
        ] + tb[1:])
    return out


def docker(lines: list[str], rng: random.Random) -> Lines:
    """`docker compose up` output: `svc-1  | ` before each line of the container (SGLang framing inside)."""
    inner = sglang(lines, rng, 1, fullgraph=True)
    svc = rng.choice(["sglang-1", "llm-server-1", "inference-1"])
    return [(f"{svc}  | {line}", end) for line, end in inner]


def kubectl(lines: list[str], rng: random.Random) -> Lines:
    """`kubectl logs --prefix --timestamps`: `[pod/P/C] RFC3339Nano ` before each line (vLLM framing inside)."""
    inner = vllm(lines, rng, new=True)
    pod = f"pod/vllm-{rng.randint(0, 9)}-{rng.choice(['7d9c4', 'b5f2a', 'c81e0'])}/vllm"
    sec = rng.randint(0, 50)
    return [(f"[{pod}] 2026-06-18T10:22:{sec:02d}.{i * 7919 % 999999999:09d}Z {line}", end)
            for i, (line, end) in enumerate(inner)]


def mpi(lines: list[str], rng: random.Random) -> Lines:
    """`srun --label` / MPI-style `N: ` task labels, two tasks printing the same crash, interleaved in pieces."""
    out: Lines = []
    queues = {r: [lines[i:i + 8] for i in range(0, len(lines), 8)] for r in (0, 1)}
    while any(queues.values()):
        r = rng.choice([k for k, q in queues.items() if q])
        out += _nl([f"{r}: {line}" for line in queues[r].pop(0)])
    return out


def pytest(lines: list[str], rng: random.Random) -> Lines:
    """pytest --tb=native: the traceback verbatim under FAILURES, captured output, the short summary line."""
    pre, tb = split(lines)
    test = rng.choice(["test_compile_forward", "test_decode_step", "test_fullgraph_smoke"])
    path = rng.choice(["tests/test_compile.py", "tests/models/test_llama_compile.py", "test/test_kernels.py"])
    head = ["============================= test session starts ==============================",
            "platform linux -- Python 3.11.7, pytest-8.3.4, pluggy-1.5.0",
            "rootdir: /workspace/proj", "configfile: pyproject.toml", "collected 3 items", ""]
    if not tb:
        body = [f"{path} ...{'':<57} [100%]", ""]
        if pre:
            body += ["=============================== warnings summary ===============================",
                     f"{path}::{test}"] + ["  " + p for p in pre] + [
                     "", "-- Docs: https://docs.pytest.org/en/stable/how-to/capture-warnings.html"]
        body.append(f"======================== 3 passed{', %d warnings' % len(pre) if pre else ''} in 14.21s "
                    "=========================")
        return _nl(head + body)
    msg = message(tb)
    exc_line = next((t for t in reversed(tb) if t and not t.startswith(" ") and t.endswith(msg[0])), msg[0])
    body = [f"{path} ..F{'':<57} [100%]", "",
            "=================================== FAILURES ===================================",
            f"{'_' * 30} {test} {'_' * 30}"] + tb
    if pre:
        body += ["----------------------------- Captured stderr call -----------------------------"] + pre
    body += ["=========================== short test summary info ============================",
             f"FAILED {path}::{test} - {exc_line}",
             "========================= 1 failed, 2 passed in 21.07s ========================="]
    return _nl(head + body)


def plain(lines: list[str], rng: random.Random) -> Lines:
    return _nl(lines)


FRAMINGS = {
    "plain": plain,
    "sglang-1": lambda ls, rng, fg: sglang(ls, rng, 1, fg),
    "sglang-2": lambda ls, rng, fg: sglang(ls, rng, 2, fg),
    "sglang-8": lambda ls, rng, fg: sglang(ls, rng, 8, fg),
    "vllm-old": lambda ls, rng: vllm(ls, rng, new=False),
    "vllm-new": lambda ls, rng: vllm(ls, rng, new=True),
    "ray": ray,
    "docker": docker,
    "kubectl": kubectl,
    "mpi": mpi,
    "pytest": pytest,
}
NEEDS_FULLGRAPH = {"sglang-1", "sglang-2", "sglang-8"}


def frame(name: str, lines: list[str], rng: random.Random, fullgraph: bool) -> Lines:
    fn = FRAMINGS[name]
    return fn(lines, rng, fullgraph) if name in NEEDS_FULLGRAPH else fn(lines, rng)
