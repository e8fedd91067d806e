#!/usr/bin/env python3
"""Generate a large SGLang-style server log with real recorded crashes buried at known lines.

    python benchmarks/gen_log.py /tmp/sglang-1g.log --size 1G [--shape traffic|startup|warnings]

The log is an SGLang start-up block, then 8 tensor-parallel ranks of one of three filler shapes:
- traffic: prefill/decode batch stats, HTTP access lines, tqdm progress bars redrawn with carriage returns;
- startup: a restart loop, the same start-up lines (naming torch, FlashInfer, SGLang) round after round;
- warnings: torch's Python warnings (UserWarning, FutureWarning and their source lines), bare or with a
  vLLM worker's tag, over and over.
Twenty crashes
are buried in it, taken verbatim from the recorded samples (samples/raw/*.log; the framed server logs
samples/*.log carry their own start-up facts, so they are not mixed in), one sample per distinct
diagnosis:
- a recording that starts with its traceback is printed the way SGLang's scheduler logs it: one
  prefixed line `[ts TPn] Scheduler hit an exception: Traceback ...`, then the unprefixed rest;
- a recording that starts with warnings or graph-break logs is written as the process printed it;
- every fifth block is two workers dying together, each line tagged `(Worker_TPn pid=...)` as vLLM's
  multiprocess executor does, the two tracebacks interleaved line by line.
Each crash block ends with the server restarting (a line per rank), which closes it. A manifest
(`<log>.json`) records each crash: its sample, the line its block starts at, and the block itself, so
a test can scan each crash alone (expected()) and compare (verify()). Deterministic for a given size,
seed and set of samples.
"""

from __future__ import annotations

import argparse
import json
import os
import random
import sys
from collections.abc import Iterator
from dataclasses import asdict, dataclass
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
SAMPLES = ROOT / "samples"
N_CRASHES = 20
RANKS = 8

HEADER = [
    ("[2025-06-01 08:00:00] server_args=ServerArgs(model_path='meta-llama/Llama-3.1-70B-Instruct', "
     "tokenizer_path='meta-llama/Llama-3.1-70B-Instruct', host='0.0.0.0', port=30000, tp_size=8, "
     "mem_fraction_static=0.85, enable_torch_compile=True, torch_compile_max_bs=32, "
     "disable_cuda_graph=False, cuda_graph_max_bs=160, attention_backend='flashinfer', "
     "sampling_backend='flashinfer', log_level='info', random_seed=42)"),
    "[2025-06-01 08:00:01] Using default HuggingFace chat template with detected content format: string",
] + [
    f"[2025-06-01 08:00:{5 + r:02d} TP{r}] Init torch distributed begin." for r in range(RANKS)
] + [
    f"[2025-06-01 08:00:{15 + r:02d} TP{r}] Load weight begin. avail mem=78.{r}1 GB" for r in range(RANKS)
]


# After a crash the server restarts: a start-up line per rank, then progress bars.
RESTART = [f"[2025-06-01 08:00:{5 + r:02d} TP{r}] Init torch distributed begin." for r in range(RANKS)]


@dataclass
class Crash:
    sample: str  # path relative to the repository
    style: str  # "scheduler", "workers" (interleaved pair) or "verbatim" (as recorded)
    rank: int
    start_line: int = 0  # 1-based line of the block's first line in the big log
    lines: list[str] | None = None  # the block, as written


def sample_paths() -> list[Path]:
    """Recorded crash logs that crashlens diagnoses on their own, in a fixed order."""
    out: list[Path] = []
    ids: set[object] = set()
    for p in sorted((SAMPLES / "raw").glob("*.log")):
        got = {d["id"] for d in diagnoses_alone(sample_lines(p))}
        if got and not got & ids:  # a crash another sample also shows would be merged with it
            out.append(p)
            ids |= got
    return out


def diagnoses_alone(lines: list[str]) -> list[dict[str, object]]:
    """What `crashlens scan --format json` reports for these lines after the start-up header."""
    from crashlens.catalog import get_catalog
    from crashlens.pipeline import combine, scan_lines
    from crashlens.render.json import document

    n, diags = scan_lines("alone", HEADER + lines, get_catalog([]))
    return list(document(combine([("alone", n, diags)]))["diagnoses"])


def sample_lines(path: Path) -> list[str]:
    text = path.read_bytes().decode("utf-8", "replace")
    lines = text.split("\n")
    if lines and lines[-1] == "":
        lines.pop()
    lines = [ln.rstrip("\r") for ln in lines]
    if lines and lines[0].startswith("# crashlens sample:"):
        lines = lines[1:]  # the recorder's own header, not log output
    while lines and not lines[-1].strip():
        lines.pop()
    return lines


def _ts(sec: int) -> str:
    d, s = divmod(sec, 86400)
    h, s = divmod(s, 3600)
    m, s = divmod(s, 60)
    return f"2025-06-{1 + d % 28:02d} {h:02d}:{m:02d}:{s:02d}"


def traffic(rng: random.Random) -> Iterator[str]:
    """An endless stream of boring server lines."""
    sec = 8 * 3600 + 120
    port = 40000
    while True:
        sec += rng.random() < 0.2
        ts = _ts(sec)
        x = rng.random()
        r = rng.randrange(RANKS)
        if x < 0.55:
            yield (f"[{ts} TP{r}] Decode batch. #running-req: {rng.randrange(1, 160)}, #token: {rng.randrange(1000, 400000)}, "
                   f"token usage: {rng.random():.2f}, cuda graph: True, gen throughput (token/s): {rng.uniform(50, 5000):.2f}, "
                   f"#queue-req: {rng.randrange(0, 40)}, ")
        elif x < 0.80:
            yield (f"[{ts} TP{r}] Prefill batch. #new-seq: {rng.randrange(1, 8)}, #new-token: {rng.randrange(16, 8192)}, "
                   f"#cached-token: {rng.randrange(0, 4096)}, token usage: {rng.random():.2f}, "
                   f"#running-req: {rng.randrange(0, 160)}, #queue-req: {rng.randrange(0, 40)}, ")
        elif x < 0.99:
            port = 40000 + (port - 39999) % 20000
            path = rng.choice(("/v1/chat/completions", "/generate", "/v1/completions", "/health", "/get_model_info"))
            yield f'[{ts}] INFO:     10.0.{rng.randrange(256)}.{rng.randrange(256)}:{port} - "POST {path} HTTP/1.1" 200 OK'
        elif x < 0.9995:
            yield from progress(rng, 1)
        else:
            yield (f"[{ts} TP{r}] Cache flushed successfully!" if rng.random() < 0.5 else
                   f"[{ts} TP{r}] KV cache pool leak check passed, available tokens: {rng.randrange(10**5, 10**6)}")


# A server in a restart loop (a supervisor restarting it after each crash, or a bad flag that kills it
# during start-up): SGLang's start-up lines, in the order SGLang 0.5 prints them, again and again.
# Lines that name torch, FlashInfer and SGLang without stating a version (which the header does not
# state either, so the buried crashes keep their diagnosis alone); the server_args line repeats the
# header's. Hand-written framing of SGLang's real start-up messages (see samples/sglang-healthy.log and
# ../shared/research/serving-stacks.md 1.3).
STARTUP_RANKED = [
    "Attention backend not explicitly specified. Use flashinfer backend by default.",
    "Init torch distributed begin.",
    "sglang is using nccl==2.27.3",
    "Init torch distributed ends. mem usage=0.{r}9 GB",
    "Load weight begin. avail mem=78.{r}1 GB",
    "Using model weights format ['*.safetensors']",
    "Load weight end. type=LlamaForCausalLM, dtype=torch.bfloat16, avail mem=61.{r}4 GB, mem usage=16.97 GB.",
    "KV Cache is allocated. #tokens: 612864, K size: 37.41 GB, V size: 37.41 GB",
    "Memory pool end. avail mem=11.27 GB",
    "Capture cuda graph begin. This can take up to several minutes. avail mem=11.02 GB",
    "Capture cuda graph bs [1, 2, 4, 8, 12, 16, 24, 32]",
    "Capture cuda graph end. Time elapsed: 6.1{r} s. mem usage=0.62 GB. avail mem=10.40 GB.",
    "max_total_num_tokens=612864, chunked_prefill_size=8192, max_prefill_tokens=16384, "
    "max_running_requests=4096, context_len=131072, available_gpu_mem=10.40 GB",
]
# The header's server_args with more of SGLang 0.5's arguments, none of which sets a fact (they name
# piecewise CUDA graphs as the flags that do).
ROUND_ARGS = HEADER[0].replace("disable_cuda_graph=False, ", (
    "disable_cuda_graph=False, piecewise_cuda_graph_max_tokens=8192, piecewise_cuda_graph_tokens=None, "
    "piecewise_cuda_graph_compiler='eager', enforce_piecewise_cuda_graph=False, "))
STARTUP_MAIN = [
    "Using default HuggingFace chat template with detected content format: string",
    "INFO:     Started server process [{pid}]",
    "INFO:     Waiting for application startup.",
    "INFO:     Application startup complete.",
    "INFO:     Uvicorn running on http://0.0.0.0:30000 (Press CTRL+C to quit)",
    'INFO:     127.0.0.1:{port} - "GET /get_model_info HTTP/1.1" 200 OK',
    "The server is fired up and ready to roll!",
    "Received sigquit from a child process. It usually means the child failed.",
]


def startup(rng: random.Random) -> Iterator[str]:
    """An endless restart loop: each round the server_args line, the start-up lines of every rank
    (interleaved, as the ranks print them together), a progress bar, the server coming up and dying."""
    sec = 8 * 3600 + 120
    while True:
        sec += rng.randrange(20, 90)
        ts = _ts(sec)
        pid = rng.randrange(1000, 99999)
        yield ROUND_ARGS.replace("[2025-06-01 08:00:00]", f"[{ts}]")
        yield f"[{ts}] {STARTUP_MAIN[0]}"
        for msg in STARTUP_RANKED:
            ranks = list(range(RANKS))
            rng.shuffle(ranks)
            for r in ranks:
                yield f"[{_ts(sec + rng.randrange(3))} TP{r}] {msg.format(r=r)}"
        yield from progress(rng, 1)
        for msg in STARTUP_MAIN[1:]:
            yield f"[{_ts(sec + 5)}] {msg.format(pid=pid, port=rng.randrange(40000, 60000))}"


# Python warnings as torch prints them (warnings.showwarning: `path:line: Category: message`, then the
# source line), over and over: once per compiled call site, per rank, per recompile. The texts are
# torch's own (torch/_dynamo/variables/functions.py, torch/_inductor, torch.cuda.amp); the paths and
# the rank tags are hand-written framing.
_SITE = "/usr/local/lib/python3.12/dist-packages"
WARNINGS = [
    [f"{_SITE}/torch/_dynamo/variables/functions.py:1692: UserWarning: Dynamo detected a call to a "
     "`functools.lru_cache`-wrapped function. Dynamo ignores the cache wrapper and directly traces the wrapped "
     "function. Silent incorrectness is only a *potential* risk, not something we have observed. Enable "
     "TORCH_LOGS=+dynamo for a DEBUG stack trace.",
     "  torch._dynamo.utils.warn_once(msg)"],
    [f"{_SITE}/torch/_dynamo/variables/functions.py:2431: UserWarning: Dynamo does not know how to trace the "
     "builtin `time.time.` This function is either a Python builtin (e.g. _warnings.warn) or a third-party C/C++ "
     "Python extension (perhaps created with pybind).",
     "If it is a Python builtin, please file an issue on GitHub so the PyTorch team can add support for it and "
     "see the next case for a workaround.",
     "If it is a third-party C/C++ Python extension, please either wrap it into a PyTorch-understood custom "
     "operator (see https://pytorch.org/tutorials/advanced/custom_ops_landing_page.html for more details) or, if "
     "it is traceable, use `torch.compiler.allow_in_graph`.",
     '  torch._dynamo.utils.warn_once(explanation + "\\n" + "\\n".join(hints))'],
    [f"{_SITE}/torch/_inductor/compile_fx.py:236: UserWarning: TensorFloat32 tensor cores for float32 matrix "
     "multiplication available but not enabled. Consider setting `torch.set_float32_matmul_precision('high')` "
     "for better performance.",
     "  warnings.warn("],
    [f"{_SITE}/sglang/srt/layers/quantization/fp8_utils.py:88: FutureWarning: `torch.cuda.amp.autocast(args...)` "
     "is deprecated. Please use `torch.amp.autocast('cuda', args...)` instead.",
     "  with torch.cuda.amp.autocast(enabled=False):"],
    [f"{_SITE}/flashinfer/jit/core.py:107: UserWarning: Prebuilt kernels not found, using JIT backend",
     "  warnings.warn("],
    # names an `Error` and a dotted `torch._C._cuda...` in passing (markers of crashes), starts nothing
    [f"{_SITE}/torch/cuda/__init__.py:129: UserWarning: CUDA initialization: Unexpected error from "
     "cudaGetDeviceCount(). Did you run some cuda functions before calling NumCudaDevices() that might have "
     "already set the error? Error 804: forward compatibility was attempted on non supported HW (Triggered "
     "internally at ../c10/cuda/CUDAFunctions.cpp:108.)",
     "  return torch._C._cuda_getDeviceCount() > 0"],
]


def warnings(rng: random.Random) -> Iterator[str]:
    """Endless torch warnings, some printed bare (SGLang's stderr), some with a vLLM worker's tag."""
    while True:
        w = WARNINGS[rng.randrange(len(WARNINGS))]
        x = rng.random()
        if x < 0.6:
            yield from w
        else:
            tag = vllm_tag(rng.randrange(RANKS))
            yield from (tag + ln for ln in w)


SHAPES = {"traffic": traffic, "startup": startup, "warnings": warnings}


def progress(rng: random.Random, n: int) -> Iterator[str]:
    """tqdm bars as a file receives them: each redraw after a carriage return, one line per bar."""
    for _ in range(n):
        total = rng.choice((4, 8, 15, 30, 52))
        what = rng.choice(("Loading safetensors checkpoint shards", "Capturing batches (bs=160 avail_mem=20.71 GB)"))
        bars = []
        for i in range(0, total + 1, max(1, total // 6)):
            pct = 100 * i // total
            bars.append(f"{what}: {pct:3d}% Completed | {i}/{total} [00:{i:02d}<00:{total - i:02d}, "
                        f"{rng.uniform(0.5, 3):.2f}it/s]")
        yield "\r".join(bars) + "\r"


def vllm_tag(rank: int) -> str:
    """vLLM's multiprocess executor tags every line a worker prints."""
    return f"(Worker_TP{rank} pid={4000 + rank}) "


def crash_block(c: Crash, text: list[str], other: tuple[int, list[str]] | None, ts: str) -> list[str]:
    """The lines a crash adds to the log, up to the restart that closes it."""
    close = [*RESTART, f'[{ts}] INFO:     127.0.0.1:1 - "GET /health HTTP/1.1" 200 OK']
    if c.style == "verbatim":
        return [*text, *close]
    if c.style == "scheduler":
        return [f"[{ts} TP{c.rank}] Scheduler hit an exception: {text[0]}", *text[1:], *close]
    assert other is not None
    r2, text2 = other
    a = [f"{vllm_tag(c.rank)}{t}" for t in text]
    b = [f"{vllm_tag(r2)}{t}" for t in text2]
    out: list[str] = []
    for i in range(max(len(a), len(b))):
        if i < len(a):
            out.append(a[i])
        if i < len(b):
            out.append(b[i])
    for r in (c.rank, r2):  # the executor stops the workers; each says so
        out += [vllm_tag(r), (f"{vllm_tag(r)}INFO 06-01 08:00:00 [multiproc_executor.py:520] Parent process exited, "
                              "terminating worker")]
    return [*out, *close]


def plan(seed: int = 0) -> list[tuple[Crash, Crash | None]]:
    """Which samples crash where: twenty crashes, every fifth block an interleaved pair of workers."""
    paths = sample_paths()
    if not paths:
        raise SystemExit("no recorded samples in samples/raw/")
    rng = random.Random(seed)
    out: list[tuple[Crash, Crash | None]] = []
    n = 0
    i = 0
    while n < N_CRASHES:
        p = paths[i % len(paths)]
        rel = str(p.relative_to(ROOT))
        if len(out) % 5 == 4 and n + 2 <= N_CRASHES:
            q = paths[(i + 1) % len(paths)]
            r1, r2 = rng.sample(range(RANKS), 2)
            out.append((Crash(rel, "workers", r1), Crash(str(q.relative_to(ROOT)), "workers", r2)))
            n += 2
            i += 2
        else:
            # SGLang's scheduler prefixes the first line of what it logs; a crash printed before the
            # traceback (warnings, graph-break logs) reaches the log as the process wrote it.
            style = "scheduler" if sample_lines(p)[0].startswith("Traceback") else "verbatim"
            out.append((Crash(rel, style, rng.randrange(RANKS)), None))
            n += 1
            i += 1
    return out


def generate(path: str | os.PathLike[str], size: int, seed: int = 0, shape: str = "traffic") -> list[Crash]:
    """Write about `size` bytes of log to `path`, its filler lines of one of SHAPES; return the crashes
    with their lines set."""
    rng = random.Random(seed)
    placed = plan(seed)
    # Crash k goes after roughly (k+1)/(n+1) of the traffic bytes.
    marks = [size * (k + 1) // (len(placed) + 1) for k in range(len(placed))]
    crashes: list[Crash] = []
    lineno = 0
    written = 0
    gen = SHAPES[shape](rng)
    k = 0
    sec = 8 * 3600
    with open(path, "wb") as fh:
        buf: list[str] = []

        def emit(lines: list[str]) -> None:
            nonlocal lineno, written
            for ln in lines:
                buf.append(ln)
                lineno += 1
                written += len(ln.encode()) + 1

        emit(HEADER)
        emit(list(progress(rng, 24)))
        while written < size or k < len(placed):
            if k < len(placed) and written >= marks[k]:
                c, c2 = placed[k]
                text = sample_lines(ROOT / c.sample)
                other = (c2.rank, sample_lines(ROOT / c2.sample)) if c2 is not None else None
                block = crash_block(c, text, other, _ts(sec + k))
                c.start_line = lineno + 1
                c.lines = block
                crashes.append(c)
                if c2 is not None:
                    c2.start_line = lineno + 1
                    c2.lines = block
                    crashes.append(c2)
                emit(block)
                emit(list(progress(rng, 12)))
                k += 1
                continue
            emit([next(gen) for _ in range(256)])
            if len(buf) > 20000:
                fh.write(("\n".join(buf) + "\n").encode())
                buf.clear()
        fh.write(("\n".join(buf) + "\n").encode() if buf else b"")
    return crashes


def parse_size(s: str) -> int:
    mult = {"K": 1 << 10, "M": 1 << 20, "G": 1 << 30}
    s = s.strip().upper().rstrip("B")
    if s and s[-1] in mult:
        return int(float(s[:-1]) * mult[s[-1]])
    return int(s)


def write_manifest(path: str, size: int, seed: int, crashes: list[Crash], shape: str = "traffic") -> None:
    doc = {"size": size, "seed": seed, "shape": shape, "samples": [str(p.relative_to(ROOT)) for p in sample_paths()],
           "crashes": [asdict(c) for c in crashes]}
    Path(str(path) + ".json").write_text(json.dumps(doc))


def ensure(path: str, size: int, seed: int = 0, shape: str = "traffic") -> list[Crash]:
    """Generate unless a log with the same size, seed, shape and samples is already there."""
    man = Path(str(path) + ".json")
    if man.exists() and os.path.exists(path):
        doc = json.loads(man.read_text())
        if doc["size"] == size and doc["seed"] == seed and doc.get("shape", "traffic") == shape and doc["samples"] == [
                str(p.relative_to(ROOT)) for p in sample_paths()]:
            return [Crash(**c) for c in doc["crashes"]]
    crashes = generate(path, size, seed, shape)
    write_manifest(path, size, seed, crashes, shape)
    return crashes


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("out")
    ap.add_argument("--size", default="10M", help="approximate size, e.g. 10M, 100M, 1G")
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--shape", choices=sorted(SHAPES), default="traffic",
                    help="the filler: decode/prefill/HTTP traffic, a start-up restart loop, or torch warnings")
    a = ap.parse_args()
    crashes = ensure(a.out, parse_size(a.size), a.seed, a.shape)
    for c in crashes:
        print(f"{c.start_line:>10}  {c.style:<9} rank {c.rank}  {c.sample}")
    return 0


if __name__ == "__main__":
    sys.exit(main())


def expected(c: Crash, header_lines: int = len(HEADER)) -> list[dict[str, object]]:
    """The diagnoses of this crash scanned alone (after the header), lines moved to where it is buried."""
    assert c.lines is not None
    shift = c.start_line - header_lines - 1
    want = []
    for d in diagnoses_alone(c.lines):
        occ = [o for o in d["occurrences"] if c.style != "workers" or o["rank"] == f"Worker_TP{c.rank}"]  # type: ignore[union-attr]
        if occ:
            want.append(dict(d, occurrences=[dict(o, line=o["line"] + shift) for o in occ]))
    return want


def verify(crashes: list[Crash], doc: dict[str, object]) -> tuple[int, list[str]]:
    """(crashes found with the diagnoses they get alone, what differs) for a scan of the big log."""
    got = {d["id"]: d for d in doc["diagnoses"]}  # type: ignore[union-attr]
    found = 0
    problems: list[str] = []
    known: set[str] = set()
    for c in crashes:
        ok = True
        want = expected(c)
        if not want:
            problems.append(f"{c.sample}: no diagnosis alone")
            ok = False
        for w in want:
            known.add(w["id"])  # type: ignore[arg-type]
            g = got.get(w["id"])  # type: ignore[call-overload]
            if g is None:
                problems.append(f"{c.sample} at line {c.start_line}: {w['signature']} not found")
                ok = False
                continue
            strip = ("occurrences", "ranks")
            diff = sorted(k for k in w if k not in strip and g.get(k) != w[k])
            if diff:
                problems.append(f"{c.sample}: {w['signature']} differs from its diagnosis alone in {diff}")
                ok = False
            here = {(o["source"], o["line"], o["rank"]) for o in g["occurrences"]}
            for o in w["occurrences"]:  # type: ignore[union-attr]
                if (g["occurrences"][0]["source"], o["line"], o["rank"]) not in here:
                    problems.append(f"{c.sample}: no occurrence at line {o['line']} rank {o['rank']}")
                    ok = False
        found += ok
    extra = [d["signature"] for i, d in got.items() if i not in known]
    if extra:
        problems.append(f"diagnoses no crash explains: {extra}")
    return found, problems
