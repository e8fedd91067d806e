#!/usr/bin/env python3
"""Build framed server logs (SGLang / vLLM shaped) around real recordings in samples/raw/.

    python samples/frame.py

There is no GPU server here, so the server side of each log (start-up lines, rank prefixes,
PCG hint, SIGQUIT line, vLLM process tags, rank interleaving, ANSI colours, CRLF) is written
by this script.  The tracebacks, Dynamo messages and warnings inside are copied verbatim
from the raw recordings made by samples/record.py.  The output is deterministic: fixed
timestamps and pids, and a seeded random generator for the interleaving.
Standard library only.
"""

import random
import re
import sys
from datetime import datetime, timedelta
from pathlib import Path

HERE = Path(__file__).resolve().parent
RAW = HERE / "raw"

PCG_HINT = [
    "Piecewise CUDA Graph is enabled by default as an experimental feature.",
    "To work around this error, add --disable-piecewise-cuda-graph to your launch command.",
    "Please report this issue at https://github.com/sgl-project/sglang/issues/new/choose",
]
SIGQUIT = "Received sigquit from a child process. It usually means the child failed."


# --------------------------------------------------------------------------------------------
# reading raw recordings

def read_raw(name: str):
    """Return the lines (without line ends) of samples/raw/<name>.log, header removed."""
    text = (RAW / f"{name}.log").read_bytes().decode("utf-8")
    lines = text.split("\n")
    if text.endswith("\n"):
        lines.pop()
    assert lines[0].startswith("# crashlens sample: recorded by samples/record.py"), name
    return lines[1:]


def split_traceback(lines):
    """(lines before the exception report, the exception report as Python printed it)."""
    for i, line in enumerate(lines):
        if line == "Traceback (most recent call last):":
            return lines[:i], lines[i:]
    raise ValueError("no traceback in recording")


def exception_message(tb_lines):
    """str(e) of the final exception: text after '<Type>: ' on its line, plus all lines after."""
    last_tb = max(i for i, line in enumerate(tb_lines) if line == "Traceback (most recent call last):")
    i = last_tb + 1
    while i < len(tb_lines) and (tb_lines[i].startswith("  ") or tb_lines[i] == ""):
        i += 1
    head = tb_lines[i]
    _, _, first = head.partition(": ")
    msg = [first] + tb_lines[i + 1:]
    while msg and msg[-1] == "":
        msg.pop()
    return msg


def warning_blocks(pre_lines):
    """Split the warnings printed before a traceback into blocks (one per warnings.warn call)."""
    blocks, cur = [], []
    for line in pre_lines:
        if re.match(r"^\S+\.py:\d+: \w+Warning: ", line) and cur:
            blocks.append(cur)
            cur = []
        cur.append(line)
    if cur:
        blocks.append(cur)
    return blocks


# --------------------------------------------------------------------------------------------
# SGLang 0.5.10 framing

def server_args_repr(model: str, tp: int, enable_torch_compile: bool, quantization: str = "modelopt_fp4") -> str:
    return (
        f"server_args=ServerArgs(model_path='{model}', tokenizer_path='{model}', tokenizer_mode='auto', "
        "tokenizer_worker_num=1, skip_tokenizer_init=False, load_format='auto', model_loader_extra_config='{}', "
        "trust_remote_code=False, context_length=None, is_embedding=False, enable_multimodal=None, revision=None, "
        "model_impl='auto', host='0.0.0.0', port=30000, skip_server_warmup=False, warmups=None, nccl_port=None, "
        f"dtype='auto', quantization='{quantization}', quantization_param_path=None, kv_cache_dtype='auto', "
        "mem_fraction_static=0.835, max_running_requests=None, max_queued_requests=None, max_total_tokens=None, "
        "chunked_prefill_size=8192, max_prefill_tokens=16384, schedule_policy='fcfs', "
        "schedule_conservativeness=1.0, page_size=1, device='cuda', "
        f"tp_size={tp}, pp_size=1, max_micro_batch_size=None, stream_interval=1, stream_output=False, "
        "random_seed=1012785133, watchdog_timeout=300, dist_timeout=None, download_dir=None, base_gpu_id=0, "
        "gpu_id_step=1, sleep_on_idle=False, log_level='info', log_level_http=None, log_requests=False, "
        "show_time_cost=False, enable_metrics=False, api_key=None, served_model_name="
        f"'{model}', chat_template=None, dp_size=1, load_balance_method='round_robin', "
        "dist_init_addr=None, nnodes=1, node_rank=0, attention_backend=None, prefill_attention_backend=None, "
        "decode_attention_backend=None, sampling_backend='flashinfer', grammar_backend='xgrammar', "
        "disable_radix_cache=False, cuda_graph_max_bs=256, cuda_graph_bs=None, disable_cuda_graph=False, "
        f"disable_cuda_graph_padding=False, enable_torch_compile={enable_torch_compile}, "
        "torch_compile_max_bs=32, piecewise_cuda_graph_max_tokens=8192, piecewise_cuda_graph_tokens=None, "
        "piecewise_cuda_graph_compiler='eager', disable_piecewise_cuda_graph=False, "
        "enforce_piecewise_cuda_graph=False, torchao_config='', enable_nan_detection=False, "
        "enable_p2p_check=False, triton_attention_reduce_in_fp32=False, num_continuous_decode_steps=1, "
        "delete_ckpt_after_loading=False, enable_memory_saver=False, allow_auto_truncate=False, "
        "enable_custom_logit_processor=False, flashinfer_mla_disable_ragged=False, disable_shared_experts_fusion=False, "
        "enable_deterministic_inference=False, debug_tensor_dump_output_folder=None)"
    )


class Clock:
    def __init__(self, start: str):
        self.t = datetime.strptime(start, "%Y-%m-%d %H:%M:%S")

    def tick(self, seconds: float = 0.0) -> str:
        self.t += timedelta(seconds=seconds)
        return self.t.strftime("%Y-%m-%d %H:%M:%S")


def sg(ts: str, msg: str, rank=None) -> str:
    return f"[{ts}{'' if rank is None else f' TP{rank}'}] {msg}"


def sglang_startup(clock: Clock, model: str, tp: int, enable_torch_compile: bool, quantization="modelopt_fp4",
                   upto="pcg"):
    """Main-process and per-rank start-up lines up to (not including) graph capture or the failure point."""
    ranks = [None] if tp == 1 else list(range(tp))
    out = [sg(clock.tick(), server_args_repr(model, tp, enable_torch_compile, quantization))]
    out.append(sg(clock.tick(1), "Using default HuggingFace chat template with detected content format: string"))
    clock.tick(7)
    for r in ranks:
        out.append(sg(clock.tick(), "Attention backend not explicitly specified. Use flashinfer backend by default.", r))
    for r in ranks:
        out.append(sg(clock.tick(), "Init torch distributed begin.", r))
    clock.tick(1)
    for r in ranks:
        out.append(sg(clock.tick(), "Init torch distributed ends. mem usage=0.00 GB", r))
    for r in ranks:
        out.append(sg(clock.tick(), "Load weight begin. avail mem=93.12 GB", r))
    if upto == "load":
        return out
    clock.tick(14)
    for r in ranks:
        out.append(sg(clock.tick(), "Load weight end. type=LlamaForCausalLM, dtype=torch.bfloat16, "
                      "avail mem=87.41 GB, mem usage=5.71 GB.", r))
    for r in ranks:
        out.append(sg(clock.tick(), "KV Cache is allocated. #tokens: 612864, K size: 37.41 GB, V size: 37.41 GB", r))
    for r in ranks:
        out.append(sg(clock.tick(), "Memory pool end. avail mem=11.27 GB", r))
    for r in ranks:
        out.append(sg(clock.tick(1), "Capture cuda graph begin. This can take up to several minutes. avail mem=11.02 GB", r))
    for r in ranks:
        out.append(sg(clock.tick(), "Capture cuda graph bs [1, 2, 4, 8, 12, 16, 24, 32, 40, 48, 56, 64, 72, 80, 88, 96, "
                      "104, 112, 120, 128, 136, 144, 152, 160, 168, 176, 184, 192, 200, 208, 216, 224, 232, 240, 248, 256]", r))
    if upto == "cuda-graph":
        return out
    bar = "".join(
        f"\rCapturing batches (bs={bs} avail_mem=10.{99 - i:02d} GB): {pct:3d}%|{'█' * (pct // 10):<10}| {i}/36 "
        f"[00:{i // 6:02d}<00:{(36 - i) // 6:02d},  6.{i % 10}1it/s]"
        for i, (bs, pct) in enumerate([(256, 0), (248, 2), (240, 5), (128, 50), (16, 88), (1, 100)])
    )
    out.append(bar.lstrip("\r") if len(ranks) == 1 else bar)
    clock.tick(6)
    for r in ranks:
        out.append(sg(clock.tick(), "Capture cuda graph end. Time elapsed: 6.12 s. mem usage=0.62 GB. avail mem=10.40 GB.", r))
    for r in ranks:
        out.append(sg(clock.tick(), "Capture piecewise CUDA graph begin. avail mem=10.40 GB", r))
    for r in ranks:
        out.append(sg(clock.tick(), "Capture cuda graph num tokens [4, 8, 12, 16, 20, 24, 28, 32, 48, 64, 80, 96, 112, "
                      "128, 144, 160, 176, 192, 208, 224, 240, 256, 288, 320, 352, 384, 416, 448, 480, 512, 576, 640, "
                      "704, 768, 832, 896, 960, 1024, 1280, 1536, 1792, 2048, 2304, 2560, 2816, 3072, 3328, 3584, 3840, "
                      "4096, 4608, 5120, 5632, 6144, 6656, 7168, 7680, 8192]", r))
    return out


COMPILING_BAR = "\rCompiling num tokens (num_tokens=8192):   0%|          | 0/58 [00:00<?, ?it/s]"


def pcg_failure_records(ts: str, rank, msg_lines, tb_lines):
    """The two records SGLang 0.5.10 logs for a PCG failure in one scheduler."""
    pcg = [sg(ts, "Piecewise CUDA Graph failed with error: " + msg_lines[0], rank)] + msg_lines[1:] + PCG_HINT
    sched = [sg(ts, "Scheduler hit an exception: " + tb_lines[0], rank)] + tb_lines[1:]
    if sched[-1] != "":
        sched.append("")  # format_exception() ends in a newline, and the handler adds another
    return pcg, sched


PIPE_ATOMIC = 4096


def split_writes(record):
    """A record as the pieces a pipe delivers it in: at most PIPE_ATOMIC bytes, cut at line ends."""
    pieces, cur, size = [], [], 0
    for line in record:
        n = len(line.encode("utf-8")) + 1
        if cur and size + n > PIPE_ATOMIC:
            pieces.append(cur)
            cur, size = [], 0
        cur.append(line)
        size += n
    if cur:
        pieces.append(cur)
    return pieces


def header_framed(raw_name: str, extra: str = "") -> str:
    return ("# crashlens sample: log framing (SGLang/vLLM prefixes, rank interleaving) written by samples/frame.py "
            f"around the real traceback in samples/raw/{raw_name}.log; see samples/README.md{extra}")


def write(path: Path, header: str, lines, line_ends=None):
    """Write lines joined by '\\n' (or per-line endings from line_ends)."""
    if line_ends is None:
        body = "\n".join(lines) + "\n"
    else:
        body = "".join(line + end for line, end in zip(lines, line_ends))
    path.write_bytes((header + "\n" + body).encode("utf-8"))
    print(f"wrote {path.relative_to(HERE.parent)} ({len(lines)} lines)")


def sglang_pcg(tp: int, out_name: str, model: str, start: str, seed: int, mode: str):
    raw = "fakeserve-pcg-fp4"
    pre, tb = split_traceback(read_raw(raw))
    msg = exception_message(tb)
    warns = warning_blocks(pre)
    clock = Clock(start)
    lines = sglang_startup(clock, model, tp, enable_torch_compile=False)
    ranks = [None] if tp == 1 else list(range(tp))
    clock.tick(2)
    fail_ts = clock.tick(7)
    ends = None
    if mode == "single":
        # tqdm bar without a newline; the first warning is glued to it, as on a shared stderr
        lines.append(COMPILING_BAR + warns[0][0])
        lines += warns[0][1:]
        for w in warns[1:]:
            lines += w
        pcg, sched = pcg_failure_records(fail_ts, None, msg, tb)
        lines += pcg + sched
        lines.append(sg(clock.tick(), SIGQUIT))
    elif mode == "records":
        # two ranks: whole records alternate between ranks
        lines.append(COMPILING_BAR + COMPILING_BAR + warns[0][0])
        lines += warns[0][1:]
        for w in warns[1:]:
            lines += w
        for w in warns:
            lines += w
        recs = {r: pcg_failure_records(fail_ts, r, msg, tb) for r in ranks}
        lines += recs[0][0] + recs[1][0] + recs[1][1] + recs[0][1]
        lines.append(sg(clock.tick(), SIGQUIT))
    else:
        # Eight ranks print at once. Each process writes a warning or a log record with one write()
        # call, so writes of different ranks interleave whole; a traceback larger than a pipe's atomic
        # write (4 KiB) arrives in pieces, cut here at line boundaries (a real pipe may also cut inside
        # a line, which no reader can undo). Each rank's own order is kept.
        rng = random.Random(seed)
        lines.append("".join(COMPILING_BAR for _ in ranks))
        queues = {}
        for r in ranks:
            pcg, sched = pcg_failure_records(fail_ts, r, msg, tb)
            queues[r] = [list(w) for w in warns] + split_writes(pcg) + split_writes(sched)
        colour = {2: "\x1b[32m", 5: "\x1b[33m", 7: "\x1b[36m"}
        start_fail = len(lines)
        while any(queues.values()):
            r = rng.choice([k for k, q in queues.items() if q])
            for line in queues[r].pop(0):
                if r in colour and line.startswith(f"[{fail_ts} TP{r}]"):
                    line = f"{colour[r]}[{fail_ts} TP{r}]\x1b[0m" + line[len(f'[{fail_ts} TP{r}]'):]
                lines.append(line)
        lines.append(sg(clock.tick(), SIGQUIT))
        # CRLF line ends on a middle part of the file (e.g. one collector's segment)
        n_fail = len(lines) - start_fail
        lo, hi = start_fail + n_fail // 4, start_fail + (3 * n_fail) // 4
        ends = ["\r\n" if lo <= i < hi else "\n" for i in range(len(lines))]
    write(HERE / out_name, header_framed(raw), lines, ends)


def sglang_torch_compile_graph_breaks():
    raw = "fakeserve-torch-compile-fp4"
    rec = [line for line in read_raw(raw) if not line.startswith("fakeserve: ")]
    clock = Clock("2026-04-16 11:05:12")
    lines = sglang_startup(clock, "nvidia/Llama-3.1-8B-Instruct-NVFP4", 1, enable_torch_compile=True, upto="cuda-graph")
    lines.append(f"[{clock.tick()}] Disable piecewise CUDA graph because --enable-torch-compile is set")
    lines.append("\rCapturing batches (bs=2 avail_mem=10.99 GB):   0%|          | 0/2 [00:00<?, ?it/s]" + rec[0])
    lines += rec[1:]
    lines.append("\rCapturing batches (bs=2 avail_mem=10.99 GB):  50%|█████     | 1/2 [00:21<00:21, 21.4s/it]"
                 "\rCapturing batches (bs=1 avail_mem=10.91 GB):  50%|█████     | 1/2 [00:21<00:21, 21.4s/it]"
                 "\rCapturing batches (bs=1 avail_mem=10.91 GB): 100%|██████████| 2/2 [00:31<00:00, 15.2s/it]")
    clock.tick(31)
    lines.append(f"[{clock.tick()}] Capture cuda graph end. Time elapsed: 31.87 s. mem usage=0.41 GB. avail mem=10.58 GB.")
    lines += sglang_ready(clock)
    write(HERE / "sglang-torch-compile-graph-breaks.log",
          header_framed(raw, "; TORCH_LOGS=graph_breaks output, no crash"), lines)


def sglang_ready(clock: Clock):
    return [
        f"[{clock.tick(1)}] max_total_num_tokens=612864, chunked_prefill_size=8192, max_prefill_tokens=16384, "
        "max_running_requests=4096, context_len=131072, available_gpu_mem=10.40 GB",
        f"[{clock.tick(1)}] INFO:     Started server process [48211]",
        f"[{clock.tick()}] INFO:     Waiting for application startup.",
        f"[{clock.tick()}] INFO:     Application startup complete.",
        f"[{clock.tick()}] INFO:     Uvicorn running on http://0.0.0.0:30000 (Press CTRL+C to quit)",
        f"[{clock.tick(1)}] INFO:     127.0.0.1:51862 - \"GET /get_model_info HTTP/1.1\" 200 OK",
        f"[{clock.tick()}] Prefill batch. #new-seq: 1, #new-token: 7, #cached-token: 0, token usage: 0.00, "
        "#running-req: 0, #queue-req: 0, ",
        f"[{clock.tick(1)}] INFO:     127.0.0.1:51876 - \"POST /generate HTTP/1.1\" 200 OK",
        f"[{clock.tick()}] The server is fired up and ready to roll!",
    ]


def sglang_healthy():
    raw = "fakeserve-pcg-bf16"
    read_raw(raw)  # the healthy run exists; it printed nothing from torch
    clock = Clock("2026-04-16 09:41:02")
    lines = sglang_startup(clock, "meta-llama/Llama-3.1-8B-Instruct", 1, enable_torch_compile=False,
                           quantization="None").copy()
    lines[0] = lines[0].replace("quantization='None'", "quantization=None")
    bar = "".join(
        f"\rCompiling num tokens (num_tokens={n}): {p:3d}%|{'█' * (p // 10):<10}| {i}/58 [00:{i // 2:02d}<00:{(58 - i) // 2:02d},  2.{i % 10}3it/s]"
        for i, (n, p) in enumerate([(8192, 0), (7680, 2), (4096, 33), (512, 53), (64, 84), (4, 100)])
    )
    lines.append(bar.lstrip("\r"))
    clock.tick(29)
    lines.append(f"[{clock.tick()}] Capture piecewise CUDA graph end. Time elapsed: 29.44 s. mem usage=0.35 GB. avail mem=10.05 GB.")
    lines += sglang_ready(clock)
    write(HERE / "sglang-healthy.log",
          "# crashlens sample: log framing (SGLang prefixes) written by samples/frame.py; a healthy start-up with no "
          "crash, standing for the passing run in samples/raw/fakeserve-pcg-bf16.log; see samples/README.md", lines)


def sglang_import_error():
    raw = "fakeserve-import-error"
    pre, tb = split_traceback(read_raw(raw))
    clock = Clock("2026-04-16 12:30:40")
    lines = sglang_startup(clock, "openai/gpt-oss-20b", 1, enable_torch_compile=False, quantization="mxfp4", upto="load")
    lines += pre
    ts = clock.tick(1)
    lines.append(sg(ts, "Scheduler hit an exception: " + tb[0]))
    lines += tb[1:] + [""]
    lines.append(sg(clock.tick(), SIGQUIT))
    write(HERE / "sglang-import-error.log", header_framed(raw), lines)


def sglang_restarts():
    """One log file appended to over three launches of a tp=2 server (a supervisor restarts it after each
    crash): the subprocess probe crash, the same crash again (the change made did not help), then the next
    blocker of the same chain once the probe was patched. The tracebacks and warnings are the real ones of
    raw/fakeserve-pcg-fp4.log (launches 1 and 2) and raw/fp4-round-2.log (launch 3); the launches, the
    prefixes and the interleaving of the two ranks are written here."""
    launches = [("fakeserve-pcg-fp4", "2026-04-16 13:02:10"), ("fakeserve-pcg-fp4", "2026-04-16 13:03:31"),
                ("fp4-round-2", "2026-04-16 13:21:47")]
    lines = []
    for raw, start in launches:
        pre, tb = split_traceback(read_raw(raw))
        msg = exception_message(tb)
        warns = [w for w in warning_blocks(pre) if re.match(r"^\S+\.py:\d+: \w+Warning: ", w[0])]
        clock = Clock(start)
        lines += sglang_startup(clock, "nvidia/Llama-3.3-70B-Instruct-NVFP4", 2, enable_torch_compile=False)
        clock.tick(2)
        fail_ts = clock.tick(7)
        lines.append(COMPILING_BAR + COMPILING_BAR + warns[0][0])
        lines += warns[0][1:]
        for w in warns[1:] + warns:
            lines += w
        recs = {r: pcg_failure_records(fail_ts, r, msg, tb) for r in (0, 1)}
        lines += recs[0][0] + recs[1][0] + recs[1][1] + recs[0][1]
        lines.append(sg(clock.tick(), SIGQUIT))
    write(HERE / "sglang-restarts-fp4.log",
          "# crashlens sample: log framing (three SGLang launches appended to one file, prefixes, rank interleaving) "
          "written by samples/frame.py around the real tracebacks in samples/raw/fakeserve-pcg-fp4.log (launches 1 "
          "and 2) and samples/raw/fp4-round-2.log (launch 3); see samples/README.md", lines)


# --------------------------------------------------------------------------------------------
# vLLM 0.11 framing

def vllm_prefix(proc: str, pid: int, level: str, ts: str, fileinfo: str) -> str:
    return f"({proc} pid={pid}) {level} {ts} [{fileinfo}] "


def vllm_record(proc, pid, level, ts, fileinfo, msg_lines):
    """NewLineFormatter: every line of a multi-line message gets the prefix, joined with \\r\\n;
    the process tag is added after every \\n by the stdout wrapper. Returns (lines, line ends)."""
    pre = vllm_prefix(proc, pid, level, ts, fileinfo)
    lines = [pre + m for m in msg_lines]
    ends = ["\r\n"] * (len(lines) - 1) + ["\n"]
    return lines, ends


def vllm_tp2():
    raw = "fakeserve-pcg-fp4"
    pre, tb = split_traceback(read_raw(raw))
    msg = exception_message(tb)
    model = "nvidia/Llama-3.1-8B-Instruct-NVFP4"
    lines, ends = [], []

    def add(recs):
        ls, es = recs
        lines.extend(ls)
        ends.extend(es)

    api, core = ("APIServer", 88), ("EngineCore_DP0", 99)
    workers = [("Worker_TP0", 123), ("Worker_TP1", 124)]
    add(vllm_record(*api, "INFO", "06-18 10:21:47", "api_server.py:1839", ["vLLM API server version 0.11.0"]))
    add(vllm_record(*api, "INFO", "06-18 10:21:47", "utils.py:233",
                    [f"non-default args: {{'model_tag': '{model}', 'model': '{model}', 'tensor_parallel_size': 2}}"]))
    add(vllm_record(*api, "INFO", "06-18 10:21:55", "model.py:547", ["Resolved architecture: LlamaForCausalLM"]))
    add(vllm_record(*api, "INFO", "06-18 10:21:55", "model.py:1510", ["Using max model len 131072"]))
    add(vllm_record(*core, "INFO", "06-18 10:22:01", "core.py:77", [
        f"Initializing a V1 LLM engine (v0.11.0) with config: model='{model}', speculative_config=None, "
        f"tokenizer='{model}', skip_tokenizer_init=False, tokenizer_mode=auto, revision=None, "
        "tokenizer_revision=None, trust_remote_code=False, dtype=torch.bfloat16, max_seq_len=131072, "
        "download_dir=None, load_format=auto, tensor_parallel_size=2, pipeline_parallel_size=1, "
        "data_parallel_size=1, disable_custom_all_reduce=False, quantization=modelopt_fp4, enforce_eager=False, "
        "kv_cache_dtype=auto, device_config=cuda, structured_outputs_config=StructuredOutputsConfig(backend='auto'), "
        f"seed=0, served_model_name={model}, enable_prefix_caching=True, chunked_prefill_enabled=True, "
        "pooler_config=None, compilation_config={\"level\":3,\"debug_dump_path\":\"\",\"cache_dir\":\"\","
        "\"backend\":\"\",\"custom_ops\":[],\"splitting_ops\":[\"vllm.unified_attention\","
        "\"vllm.unified_attention_with_output\",\"vllm.mamba_mixer2\",\"vllm.mamba_mixer\",\"vllm.short_conv\","
        "\"vllm.linear_attention\",\"vllm.plamo2_mamba_mixer\",\"vllm.gdn_attention\",\"vllm.sparse_attn_indexer\"],"
        "\"use_inductor\":true,\"compile_sizes\":[],\"inductor_compile_config\":{\"enable_auto_functionalized_v2\":false},"
        "\"inductor_passes\":{},\"cudagraph_mode\":[2,1],\"use_cudagraph\":true,\"cudagraph_num_of_warmups\":1,"
        "\"cudagraph_capture_sizes\":[512,504,496,488,480,472,464,456,448,440,432,424,416,408,400,392,384,376,368,"
        "360,352,344,336,328,320,312,304,296,288,280,272,264,256,248,240,232,224,216,208,200,192,184,176,168,160,"
        "152,144,136,128,120,112,104,96,88,80,72,64,56,48,40,32,24,16,8,4,2,1],\"cudagraph_copy_inputs\":false,"
        "\"full_cuda_graph\":false,\"use_inductor_graph_partition\":false,\"pass_config\":{},\"max_capture_size\":512,"
        "\"local_cache_dir\":null}"]))
    for i, (proc, pid) in enumerate(workers):
        add(vllm_record(proc, pid, "INFO", "06-18 10:22:09", "parallel_state.py:1208",
                        [f"rank {i} in world size 2 is assigned as DP rank 0, PP rank 0, TP rank {i}, EP rank {i}"]))
    for proc, pid in workers:
        add(vllm_record(proc, pid, "INFO", "06-18 10:22:10", "gpu_model_runner.py:2602",
                        [f"Starting to load model {model}..."]))
    for proc, pid in workers:
        add(vllm_record(proc, pid, "INFO", "06-18 10:22:24", "gpu_model_runner.py:2634",
                        ["Model loading took 2.8710 GiB and 13.702134 seconds"]))
    for i, (proc, pid) in enumerate(workers):
        add(vllm_record(proc, pid, "INFO", "06-18 10:22:31", "backends.py:548", [
            f"Using cache directory: /root/.cache/vllm/torch_compile_cache/7b1c2f6e3d/rank_{i}_0/backbone "
            "for vLLM's torch.compile"]))
    # raw stderr of each worker (the lru_cache / builtin warnings): tagged, no level
    for proc, pid in workers:
        for line in pre:
            lines.append(f"({proc} pid={pid}) {line}")
            ends.append("\n")
    # both workers log the exception with the traceback; records interleave
    recs = [vllm_record(proc, pid, "ERROR", "06-18 10:22:33", "multiproc_executor.py:671",
                        ["WorkerProc hit an exception."] + [t for t in tb if True]) for proc, pid in workers]
    for recs_i in (recs[1], recs[0]):
        add(recs_i)
    # engine side: the RPC failure echoes the worker's message (hand-written vLLM frames)
    engine_tb = [
        "EngineCore failed to start.",
        "Traceback (most recent call last):",
        '  File "/usr/local/lib/python3.12/dist-packages/vllm/v1/engine/core.py", line 699, in run_engine_core',
        "    engine_core = EngineCoreProc(*args, **kwargs)",
        "                  ^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^",
        '  File "/usr/local/lib/python3.12/dist-packages/vllm/v1/engine/core.py", line 498, in __init__',
        "    super().__init__(vllm_config, executor_class, log_stats,",
        '  File "/usr/local/lib/python3.12/dist-packages/vllm/v1/engine/core.py", line 92, in __init__',
        "    self._initialize_kv_caches(vllm_config)",
        '  File "/usr/local/lib/python3.12/dist-packages/vllm/v1/engine/core.py", line 190, in _initialize_kv_caches',
        "    self.model_executor.determine_available_memory())",
        "    ^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^",
        '  File "/usr/local/lib/python3.12/dist-packages/vllm/v1/executor/abstract.py", line 85, in determine_available_memory',
        '    return self.collective_rpc("determine_available_memory")',
        "           ^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^",
        '  File "/usr/local/lib/python3.12/dist-packages/vllm/v1/executor/multiproc_executor.py", line 264, in collective_rpc',
        "    result = get_response(w, dequeue_timeout,",
        "             ^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^",
        '  File "/usr/local/lib/python3.12/dist-packages/vllm/v1/executor/multiproc_executor.py", line 248, in get_response',
        "    raise RuntimeError(",
        "RuntimeError: Worker failed with error '" + msg[0],
    ] + msg[1:] + ["', please check the stack trace above for the root cause"]
    add(vllm_record(*core, "ERROR", "06-18 10:22:34", "core.py:708", engine_tb))
    api_tb = [
        "Traceback (most recent call last):",
        '  File "/usr/local/bin/vllm", line 8, in <module>',
        "    sys.exit(main())",
        "             ^^^^^^",
        '  File "/usr/local/lib/python3.12/dist-packages/vllm/v1/engine/utils.py", line 880, in wait_for_engine_startup',
        "    raise RuntimeError(\"Engine core initialization failed. \"",
        "RuntimeError: Engine core initialization failed. See root cause above. Failed core proc(s): {}",
    ]
    for line in api_tb:
        lines.append(f"(APIServer pid=88) {line}")
        ends.append("\n")
    write(HERE / "vllm-tp2-fp4.log", header_framed(raw), lines, ends)


def main() -> int:
    sglang_pcg(1, "sglang-1rank-pcg-fp4.log", "nvidia/Llama-3.1-8B-Instruct-NVFP4", "2026-04-16 10:22:33", 1, "single")
    sglang_pcg(2, "sglang-2rank-pcg-fp4.log", "nvidia/Llama-3.3-70B-Instruct-NVFP4", "2026-04-16 10:40:02", 2, "records")
    sglang_pcg(8, "sglang-8rank-pcg-fp4.log", "nvidia/Llama-3.3-70B-Instruct-NVFP4", "2026-04-16 10:58:19", 8, "chunks")
    sglang_torch_compile_graph_breaks()
    sglang_healthy()
    sglang_import_error()
    vllm_tp2()
    sglang_restarts()
    return 0


if __name__ == "__main__":
    sys.exit(main())
