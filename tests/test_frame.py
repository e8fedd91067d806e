"""Framing: the prefixes real servers print (lines quoted from public SGLang/vLLM/torch logs)."""

from __future__ import annotations

import pytest

from crashlens.frame import frame_line

CASES = [
    # SGLang: ranks inside the timestamp bracket, record start only
    ("[2025-02-15 12:24:59 DP13 TP13] Capture cuda graph begin. This can take up to several minutes.",
     "DP13 TP13", "Capture cuda graph begin. This can take up to several minutes.", True),
    ("[2026-05-09 12:23:55] Capture cuda graph num tokens [4, 8, 12]", None, "Capture cuda graph num tokens [4, 8, 12]", True),
    ("[2026-06-10 13:08:34 TP7] Piecewise CUDA Graph failed with error: boom", "TP7",
     "Piecewise CUDA Graph failed with error: boom", True),
    # Ray launcher around SGLang
    ("(worker1, rank=1, pid=6813, ip=10.202.0.41) [2025-02-15 12:24:59 DP13 TP13] Capture cuda graph begin.",
     "DP13 TP13", "Capture cuda graph begin.", True),
    # vLLM: process tag and level on every line; traceback indentation survives
    ("(VllmWorker rank=3 pid=7481) INFO 07-18 07:30:59 [default_loader.py:272] Loading weights took 22.38 seconds",
     "VllmWorker rank=3", "Loading weights took 22.38 seconds", False),
    ("(EngineCore_DP0 pid=506800) ERROR 10-14 21:31:51 [core.py:792]   File \"/x/gpu_model_runner.py\", line 3722, in profile_run",
     "EngineCore_DP0", '  File "/x/gpu_model_runner.py", line 3722, in profile_run', False),
    ("(Worker_TP1 pid=25649) ERROR 11-11 15:19:45 [multiproc_executor.py:671] Traceback (most recent call last):",
     "Worker_TP1", "Traceback (most recent call last):", False),
    ("ERROR 05-23 09:31:47 [core.py:396] File \".../convert_frame.py\", line 547, in __call__",
     None, 'File ".../convert_frame.py", line 547, in __call__', False),
    # torch glog and torch.distributed rank prefixes
    ("[rank4]:E0317 07:53:56.045000 2265 torch/_guards.py:283] [14/1] Error while creating guard:",
     "rank4", "Error while creating guard:", False),
    ("[rank0]: Traceback (most recent call last):", "rank0", "Traceback (most recent call last):", False),
    ("V1129 16:24:39.657000 18630 torch/_dynamo/symbolic_convert.py:5124] [0/0] [__graph_breaks] Graph break in user code at /a.py:3",
     None, "Graph break in user code at /a.py:3", False),
]


@pytest.mark.parametrize(("raw", "rank", "text", "record_start"), CASES, ids=[c[0][:40] for c in CASES])
def test_prefix_is_parsed_off(raw, rank, text, record_start):
    line = frame_line("x.log", 7, raw)
    assert (line.rank, line.text, line.record_start) == (rank, text, record_start)
    assert line.lineno == 7 and line.source == "x.log"


def test_colour_codes_do_not_hide_a_prefix():
    line = frame_line("x", 1, "\x1b[1;36m(VllmWorker rank=2 pid=123)\x1b[0;0m ERROR 06-18 10:22:33 [f.py:12] boom")
    assert (line.rank, line.level, line.text) == ("VllmWorker rank=2", "ERROR", "boom")


def test_graph_break_artifact_is_kept():
    line = frame_line("x", 1, "V1129 16:24:39.657000 18630 torch/_dynamo/symbolic_convert.py:5124] [0/0] [__graph_breaks] x")
    assert line.artifact == "graph_breaks" and line.level == "DEBUG"


@pytest.mark.parametrize("prefix", ["sglang-1  | ", "vllm_server_1 | ", "[pod/sglang-0/server] ", "E       "])
def test_container_and_pytest_prefixes_come_off(prefix):
    line = frame_line("x", 1, prefix + "torch._dynamo.exc.Unsupported: Attempted to call function marked as skipped")
    assert line.text == "torch._dynamo.exc.Unsupported: Attempted to call function marked as skipped"
    # indentation inside the prefix-less text survives (frame lines keep their two spaces)
    frame = frame_line("x", 2, prefix + '  File "/a/b.py", line 3, in f')
    assert frame.text == '  File "/a/b.py", line 3, in f'


# Ray's log deduplication (on by default) prints a line repeated by several workers once and appends
# ` [repeated Nx across cluster]`; the first such line of a run also carries Ray's note on how to turn it
# off. Both lines below are quoted from public Ray/vLLM logs (vLLM-on-Ray and SkyRL issue threads).
RAY_DEDUP_NOTE = (" (Ray deduplicates logs by default. Set RAY_DEDUP_LOGS=0 to disable log deduplication, or see "
                  "https://docs.ray.io/en/master/ray-observability/user-guides/configure-logging.html"
                  "#log-deduplication for more options.)")


@pytest.mark.parametrize("note", ["", RAY_DEDUP_NOTE], ids=["suffix", "suffix-and-note"])
def test_rays_dedup_suffix_comes_off(note):
    raw = ('(RayWorkerWrapper pid=21281) ERROR 07-15 03:02:32 [worker_base.py:622]   File "/v/torch/_dynamo/'
           'output_graph.py", line 1519, in _call_user_compiler [repeated 4x across cluster]' + note)
    line = frame_line("x", 1, raw)
    assert (line.rank, line.text) == ("RayWorkerWrapper", '  File "/v/torch/_dynamo/output_graph.py", line 1519, '
                                      "in _call_user_compiler")
    # the words alone, inside a message, are the message's own text
    msg = frame_line("x", 2, "INFO 02-05 09:08:19 [x.py:1] the log said [repeated 3x across cluster] here")
    assert msg.text == "the log said [repeated 3x across cluster] here"


def test_a_cut_prefix_tail_is_a_prefix_only_on_a_pastes_first_line():
    # a paste that starts inside vLLM's `LEVEL date file.py:N] ` loses what is left of it; further on, the same
    # text is the rest of a line that a terminal wrapped inside its prefix (traceback.Rewrap joins it back)
    raw = 'multiproc_worker_utils.py:236]   File "/p/a.py", line 3, in f'
    assert frame_line("x", 1, raw).text == '  File "/p/a.py", line 3, in f'
    assert frame_line("x", 2, raw).text == raw
