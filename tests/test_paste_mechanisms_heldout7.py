"""General mechanisms that real serving-stack pastes (samples/pastes-heldout7, read by path) exposed.

Each test names the mechanism, not the case: the paste is only the real text that shows it. Where a rule could
overreach, a negative from the same set (or a real recording) sits beside it.
"""

from __future__ import annotations

import pytest
from conftest import SAMPLES

from crashlens.cli.scan import run_scan
from crashlens.evidence import is_compiled_run
from crashlens.frame import frame_line
from crashlens.records import Frame

HELDOUT7 = SAMPLES / "pastes-heldout7"


def _scan(name: str):
    path = HELDOUT7 / name
    if not path.is_file():
        pytest.skip(f"{path} not present")
    return run_scan((str(path),), (), audit=False).diagnoses


def _one(name: str, signature: str, fatal: bool = True):
    diags = _scan(name)
    assert [(d.family, d.fatal, d.signature) for d in diags] == [("dynamo", fatal, signature)]
    return diags[0]


# -- a wrapper's `raise type(err)(msg)` of BackendCompilerFailed ---------------------------------------------

@pytest.mark.parametrize("name", ["case-003.log", "case-008.log"])
def test_a_failed_reraise_of_backend_compiler_failed_is_the_backend_failure_it_hides(name):
    # vLLM V0's model_runner_base `_wrapper`: `TypeError: BackendCompilerFailed.__init__() missing 1 required
    # positional argument: 'inner_exception'`, no torch frame in view
    d = _one(name, "backend-failure-reraised")
    assert d.culprit is None  # the re-raise's own frame is not what dynamo traced
    assert any("printed above this TypeError" in f.title for f in d.fixes)


# -- inductor's AttrsDescriptor import against a newer Triton -------------------------------------------------

@pytest.mark.parametrize("name", ["case-033.log", "case-034.log", "case-035.log"])
def test_inductor_importing_attrs_descriptor_is_a_torch_triton_version_mismatch(name):
    # message-only (033), quotes lost (034), ComfyUI lines around two chained tracebacks (035): one report each
    d = _one(name, "inductor-triton-version-mismatch")
    assert d.culprit is None  # ComfyUI's execution.py only called into the import
    first = d.fixes[0].title
    assert "Triton version your torch pins" in first and "2.6: 3.2.0" in first


# -- messages only torch.compile writes, quoted without their exception line ----------------------------------

def test_a_non_tensor_result_of_a_torch_cuda_query_is_read_from_the_bare_message():
    # one line: `torch.* op returned non-Tensor: torch.cuda.device_count`
    # no exception type before it: a graph break unless fullgraph was on, so a finding
    _one("case-041.log", "torch-cuda-query", fatal=False)


def test_dynamos_builtin_warning_quoted_in_prose_is_a_graph_break_on_a_c_extension():
    # two `UserWarning: Dynamo does not know how to trace the builtin `sageattention._fused....` lines, the
    # second cut inside its backtick: one non-fatal finding
    d = _one("case-040.log", "c-extension-call", fatal=False)
    assert "custom_op" in d.fixes[0].title


def test_a_warn_once_in_the_warnings_modules_format_opens_no_record_of_its_own():
    # the same words as `FILE:LINE: UserWarning:` precede dynamo's own report, which says more (a real recording)
    path = SAMPLES / "raw" / "fp4-round-5.log"
    text = path.read_text()
    assert "UserWarning: Dynamo does not know how to trace the builtin" in text
    diags = run_scan((str(path),), (), audit=False).diagnoses
    assert [d.signature for d in diags] == ["thread-lock"]
    assert all(o.line > text[: text.index("Traceback")].count("\n") for o in diags[0].occurrences)


def test_cudagraph_trees_overwritten_output_quoted_by_an_application_logger():
    # `ERROR:fish_speech_api.routes.speech:Request failed: Error: accessing tensor output of CUDAGraphs ...`
    d = _one("case-036.log", "cudagraph-trees-output-overwritten")
    assert "inference.py:305 in decode_one_token_ar" in d.fixes[0].title
    assert ".clone()" in d.fixes[0].title


def test_vllms_compile_cache_message_under_a_double_ray_and_vllm_prefix():
    d = _one("case-051.log", "vllm-compile-cache-corrupted")
    assert "torch_compile_cache" in d.fixes[0].title


def test_nvidia_dynamo_launcher_lines_are_not_torch_dynamo():
    # `python -m dynamo.vllm`: the word is NVIDIA Dynamo's
    assert _scan("case-054.log") == ()


# -- framing ---------------------------------------------------------------------------------------------------

def test_a_stage_tag_before_vllms_level_prefix_comes_off():
    line = frame_line("x", 1, '[Stage-0] ERROR 03-03 12:05:47 [diffusion_worker.py:430]   File "/a/b.py", line 3, in f')
    assert line.text == '  File "/a/b.py", line 3, in f'
    assert line.rank == "Stage-0" and line.level == "ERROR"
    # a bracketed word that vLLM's level and date do not follow is the line's own text
    assert frame_line("x", 1, "[Stage-0] compiling").text == "[Stage-0] compiling"
    _one("case-045.log", "compile-error-out-of-view")


def test_a_glog_time_the_reporter_masked_is_still_a_glog_prefix():
    line = frame_line("x", 2, r"E1018 zz:23:38.281000 6040 Lib\site-packages\torch\_inductor\runtime\triton_heuristics.py:780] [1/2_1] Triton compilation failed: k")
    assert line.text == "Triton compilation failed: k" and line.level == "ERROR"


# -- ERROR glog lines that inductor's files wrote --------------------------------------------------------------

def test_inductors_triton_compilation_failed_glog_line_is_a_backend_failure():
    _one("case-052.log", "backend-compiler-failed")


def test_kernel_source_logged_at_error_by_inductor_is_a_compile_failure_out_of_view():
    # the `Triton compilation failed` line cut, only the kernel's source lines under `[rank0]:E0422 ... torch/_inductor/`
    _one("case-049.log", "compile-error-out-of-view")


@pytest.mark.parametrize("raw", [
    # another package's error, and an inductor line below ERROR
    "[rank0]:E0422 19:20:10.075000 29913 torch/distributed/elastic/multiprocessing/api.py:869] failed (exitcode: 1)",
    "I0422 19:20:10.075000 29913 torch/_inductor/runtime/triton_heuristics.py:780] [0/0]     xmask = xindex < xnumel",
])
def test_glog_lines_that_are_not_inductors_or_dynamos_errors_start_nothing(raw, tmp_path):
    p = tmp_path / "x.log"
    p.write_text(raw + "\n")
    assert run_scan((str(p),), (), audit=False).diagnoses == ()


# -- a compiled graph's run, its exception out of view ---------------------------------------------------------

@pytest.mark.parametrize("name", [
    "case-022.log",  # eval_frame `_fn` -> fx GraphModule call_wrapped / `raise e`
    "case-042.log",
    "case-043.log",  # the compiled forward's frame at its `def` line, then eval_frame `_fn`
    "case-047.log",  # ... under a docker-compose service prefix
    "case-055.log",  # ... with a blank line after every line
])
def test_a_compiled_graph_run_cut_before_its_exception_is_torch_compiles(name):
    d = _one(name, "compiled-graph-run-out-of-view")
    assert d.culprit is None  # the def line of the compiled forward is where it was entered, not what failed
    assert d.fixes[0].title.startswith("Get the full exception")


@pytest.mark.parametrize("name", [
    # a server's or an app's runtime of compiled pieces without a frame of torch's compile stack: vLLM's
    # backends.py `entry.runnable` -> compiler_interface `compiled_graph` (002), ComfyUI's compile wrapper (038);
    # the same shape as samples/pastes-heldout2 case 029 (vllm/compilation/caching.py), labelled no failure there
    "case-002.log",
    "case-038.log",
    "case-023.log",  # a GraphModule's `raise e` with no dynamo frame: any fx GraphModule runs so
    "case-028.log",  # ComfyUI's sampler frames only
    "case-048.log",  # interleaved V0 worker lines, no compile
    "case-053.log",  # vLLM's own fused-MoE Triton kernel
])
def test_frames_that_do_not_say_a_compiled_graph_ran_stay_unreported(name):
    assert [d for d in _scan(name) if d.family == "dynamo"] == []


def test_vllms_compiled_piece_runtime_alone_is_no_dynamo_evidence():
    path = SAMPLES / "pastes-heldout2" / "case-029.log"
    if not path.is_file():
        pytest.skip(f"{path} not present")
    assert [d for d in run_scan((str(path),), (), audit=False).diagnoses if d.family == "dynamo"] == []


def test_eval_frames_wrapper_alone_is_no_compiled_run():
    # torch._dynamo.disable wraps many functions in `_fn`: only a GraphModule below it, or dynamo's transformed
    # frame (at its `def` line) above it, says a compiled graph is being called
    fn = Frame("/x/torch/_dynamo/eval_frame.py", 632, "_fn", "return fn(*args, **kwargs)")
    user = Frame("/x/app/model.py", 12, "forward", "y = self.proj(x)")
    gm = Frame("/x/torch/fx/graph_module.py", 784, "call_wrapped", "return self._wrapped_call(self, *args, **kwargs)")
    entered = Frame("/x/app/model.py", 10, "forward", "def forward(")
    assert not is_compiled_run((user, fn, user))
    assert is_compiled_run((user, fn, gm))
    assert is_compiled_run((entered, fn, user))


def test_a_logged_stack_through_a_compiled_call_is_no_crash():
    # TORCH_LOGS=+dynamo's INFO `Stack (most recent call last):` of a healthy compile runs through eval_frame `_fn`
    # (a real paste: samples/pastes-heldout4 case 018, labelled no failure)
    path = SAMPLES / "pastes-heldout4" / "case-018.log"
    if not path.is_file():
        pytest.skip(f"{path} not present")
    assert [d for d in run_scan((str(path),), (), audit=False).diagnoses if d.fatal] == []


# -- the same rules on manglings of real recordings (samples/corpus-degraded) --------------------------------

def _degraded(case: str, tmp_path):
    import gzip

    path = SAMPLES / "corpus-degraded" / "cases" / f"{case}.log.gz"
    if not path.is_file():
        pytest.skip(f"{path} not present")
    out = tmp_path / f"{case}.log"
    out.write_bytes(gzip.decompress(path.read_bytes()))
    return run_scan((str(out),), (), audit=False).diagnoses


@pytest.mark.parametrize("case", ["case-0349", "case-0446"])
def test_a_warn_once_line_a_terminal_wrapped_is_no_crash(case, tmp_path):
    # `.../torch/_dynamo/variables/funct` / `ions.py:1263: UserWarning: Dynamo does not know how ...` and
    # `...: UserWarn` / `ing: Dynamo does not know how ...`: graph-break runs, labelled no failure
    assert [d for d in _degraded(case, tmp_path) if d.fatal] == []


def test_dynamos_benign_multi_line_error_record_in_glog_is_no_second_crash(tmp_path):
    # metrics_context's `Unexpected exception logging compilation metrics` with its traceback, every line under
    # `E... torch/_dynamo/metrics_context.py:107] [0/0]`, beside the real crash: one fatal report
    assert [d.signature for d in _degraded("case-0303", tmp_path) if d.fatal] == ["namespace-construction"]
