"""General mechanisms that real bug-report pastes (samples/pastes-heldout5, read by path) exposed.

Each test names the mechanism, not the case: the paste is only the real text that shows it.
"""

from __future__ import annotations

from conftest import paste_scanner

from crashlens.catalog import get_catalog
from crashlens.frame import frame_line
from crashlens.pipeline import scan_lines

_scan = paste_scanner("pastes-heldout5")


def _lines(lines: list[str]):
    return scan_lines("x", iter(lines), get_catalog([]))[1]


def _where(d) -> tuple[str, int, str]:
    c = d.culprit
    assert c is not None
    return (c.file.replace("\\", "/").rsplit("site-packages/", 1)[-1].rsplit("dist-packages/", 1)[-1], c.line,
            c.function)


# -- framing: torchrun's `[rankN]:` prefix on an indented log line; a line pasted as inline code ---------

def test_indented_torchrun_rank_prefix_comes_off():
    line = frame_line("x", 1, "  [rank1]:[2024-04-17 17:26:37,137] [7/0] torch._dynamo.exc: [WARNING] Adding a graph break.")
    assert (line.text, line.rank, line.level, line.logger) == (
        "Adding a graph break.", "rank1", "WARNING", "torch._dynamo.exc")
    # with torchelastic's role before it; and a source line indented under a frame is still no log line
    assert frame_line("x", 1, "    [trainer2][rank2]: Traceback (most recent call last):").rank == "rank2"
    assert frame_line("x", 1, "    x = d[rank0]").text == "    x = d[rank0]"


def test_a_line_pasted_as_inline_code_loses_its_backticks():
    assert frame_line("x", 1, "`RuntimeError: boom`").text == "RuntimeError: boom"
    assert frame_line("x", 1, "```").text == "```"  # a code fence is no inline code
    assert frame_line("x", 1, "`a` and `b`").text == "`a` and `b`"  # two spans of inline code in prose


# -- dynamo's fake-tensor fallback warning: the stack it prints is the user code it was tracing ---------

def test_fake_tensor_fallback_warning_names_the_frame_it_prints_once_across_ranks():
    # two ranks' `Backend compiler failed with a fake tensor exception at` / frame / `Adding a graph break.`,
    # indented under `  [rankN]:`; the last rank's copy cut by the paste's end
    diags = _scan("case-002.log")
    assert len(diags) == 1 and diags[0].family == "dynamo" and not diags[0].fatal
    assert _where(diags[0]) == ("torchrec/sparse/jagged_tensor.py", 1668, "permute")
    assert {o.rank for o in diags[0].occurrences} == {"rank0", "rank1"}


# -- a compiler's / linker's stderr printed into the middle of a traceback ------------------------------

def test_linker_output_inside_an_inductor_traceback_does_not_end_it():
    # `/usr/bin/ld: cannot find -lcuda` and `collect2: error: ld returned 1 exit status` between two frames
    # of inductor's compile_fx_inner -> graph.compile_to_module, the exception past the cut
    diags = _scan("case-021.log")
    assert [d.signature for d in diags] == ["compile-error-out-of-view"] and diags[0].fatal


def test_msvc_and_nvcc_output_inside_an_inductor_traceback_does_not_end_it_either():
    head = ['  File "C:\\py\\Lib\\site-packages\\torch\\_inductor\\compile_fx.py", line 5, in fw_compiler',
            "    return inner_compile(", '  File "C:\\py\\Lib\\site-packages\\torch\\_inductor\\debug.py", line 9, in inner']
    tail = ["    return fn(*args, **kwargs)",
            '  File "C:\\py\\Lib\\site-packages\\torch\\_inductor\\compile_fx.py", line 9, in compile_fx_inner',
            "    compiled_fn = graph.compile_to_fn()"]
    for noise in (["C:\\t\\main.c(123): error C2059: syntax error: '}'", "LINK : fatal error LNK1181: cannot open 'cuda.lib'"],
                  ["nvcc fatal   : Unsupported gpu architecture 'compute_35'"]):
        diags = _lines(head + noise + tail)
        # one traceback from its first frame: the noise neither ended it nor became its source line
        assert [(d.signature, d.occurrences[0].line) for d in diags] == [("compile-error-out-of-view", 1)], noise


def test_compiler_output_in_an_eager_traceback_is_no_dynamo_crash():
    lines = ["Traceback (most recent call last):", '  File "/srv/build.py", line 3, in run',
             "/usr/bin/ld: cannot find -lfoo: No such file or directory",
             "collect2: error: ld returned 1 exit status",
             "    subprocess.check_call(cmd)",
             "subprocess.CalledProcessError: Command '['cc', 'x.c']' returned non-zero exit status 1."]
    assert [d for d in _lines(lines) if d.family == "dynamo"] == []


# -- inductor's own messages about the machine: an environment failure of the compile -------------------

def test_triton_shared_memory_limit_under_inductor_is_not_cuda_out_of_memory():
    # `InductorError: RuntimeError: No valid triton configs.` / `OutOfMemoryError: out of resource: triton_per_...`
    diags = _scan("case-019.log")
    assert [(d.family, d.signature) for d in diags] == [("dynamo", "inductor-triton-out-of-resources")]


def test_gpu_below_capability_7_gets_the_gpu_or_a_backend_without_triton_first():
    # one line in inline backticks: inductor's `Found ... which is too old to be supported by the triton GPU compiler`
    diags = _scan("case-039.log")
    assert [d.signature for d in diags] == ["inductor-gpu-too-old"] and diags[0].fatal
    first = diags[0].fixes[0].title
    assert "7.0" in first and "aot_eager" in first and "suppress_errors" not in first


def test_ddp_optimizer_refusing_a_higher_order_op_gets_optimize_ddp_off_first():
    diags = _scan("case-025.log")
    assert [d.signature for d in diags] == ["ddp-optimizer-higher-order-op"]
    assert "optimize_ddp = False" in diags[0].fixes[0].title


def test_a_permission_error_inside_the_inductor_cache_gets_clearing_that_cache_first():
    # message-only paste, Windows, Italian locale (`Accesso negato`), doubled backslashes of the repr
    diags = _scan("case-042.log")
    assert [d.signature for d in diags] == ["inductor-cache-dir-error"]
    first = diags[0].fixes[0].title
    assert "torchinductor_DAVIDE" in first and "TORCHINDUCTOR_CACHE_DIR" in first


def test_a_permission_error_on_a_users_own_file_is_no_dynamo_crash():
    lines = ["Traceback (most recent call last):", '  File "/srv/train.py", line 9, in save',
             "    torch.save(m, p)", "PermissionError: [Errno 13] Permission denied: '/data/ckpt/model.pt'"]
    assert [d for d in _lines(lines) if d.family == "dynamo"] == []


# -- evidence of a compile where the exception is out of view --------------------------------------------

def test_the_minifiers_warning_is_a_compile_failure():
    # torch 2.0 logging format: Step 1/2/3 INFO lines, then debug_utils' `Compiled Fx GraphModule failed.
    # Creating script to minify the error.` and `Writing minified repro to ...`
    diags = _scan("case-004.log")
    assert [d.signature for d in diags] == ["compile-error-out-of-view"] and diags[0].fatal


def test_inductors_generated_input_check_at_the_top_of_a_traceback_is_a_compiled_code_failure():
    # FSDP2 + compiled linears: runtime_wrappers -> codecache __call__ -> utils run -> the generated
    # /tmp/torchinductor_<user>/p5/c....py `call` at `assert_size_stride(primals_1, ...)`, the message past the cut
    diags = _scan("case-024.log")
    assert [d.family for d in diags] == ["dynamo"] and diags[0].fatal


def test_an_oom_inside_generated_code_stays_an_oom():
    diags = _scan("case-007.log")  # CUDA OOM raised inside an inductor-generated kernel's module
    assert [d for d in diags if d.family == "dynamo"] == []


def test_dynamos_resume_frames_in_a_traceback_cut_before_its_exception_show_a_compile():
    # mmengine train_step -> `<resume in train_step>` -> mmdet data_preprocessor `<resume in forward>` -> ...
    diags = _scan("case-027.log")
    assert [d.signature for d in diags] == ["compile-error-out-of-view"]


def test_resume_frames_in_a_logged_stack_are_no_crash():
    # TORCH_LOGS=+dynamo's INFO `Stack (most recent call last):` (logging's stack_info) of a healthy compile
    p = "[2024-02-05 15:21:42,426] [1/0] torch._dynamo.symbolic_convert: [INFO] "
    lines = [p + "Step 1: torchdynamo start tracing forward m.py:30", p + "Stack (most recent call last):",
             p + '  File "/srv/m.py", line 12, in <resume in train_step>', p + "    y = self.model(x)",
             p + '  File "/srv/m.py", line 30, in forward', p + "    return self.head(x)"]
    assert [d for d in _lines(lines) if d.family == "dynamo"] == []


def test_resume_frames_above_an_eager_exception_are_no_dynamo_crash():
    lines = ["Traceback (most recent call last):",
             '  File "/srv/m.py", line 12, in <resume in forward>', "    y = self.head(x)",
             '  File "/srv/m.py", line 30, in head', "    return x[99]",
             "IndexError: index 99 is out of bounds for dimension 0 with size 4"]
    assert [d for d in _lines(lines) if d.family == "dynamo"] == []


def test_a_dynamo_exception_in_pytests_local_variables_is_a_dynamo_failure():
    # `cur_exn = Unsupported('torch.* op returned non-Tensor\n  Explanation: ...')` among compile_wrapper's locals,
    # then compile_wrapper's source
    diags = _scan("case-035.log")
    assert len(diags) == 1 and diags[0].family == "dynamo" and diags[0].fatal
    assert diags[0].exception == ("Unsupported", "torch.* op returned non-Tensor")


def test_another_librarys_unsupported_in_a_locals_listing_starts_nothing():
    assert _lines(["err = Unsupported('this file format is not supported')", "path = 'a.xyz'"]) == []


# -- where the failure was: frames a dynamo exception shows without `from user code:` ------------------

def test_an_attribute_error_dynamo_wrapped_names_the_frame_whose_line_reads_that_attribute():
    # Colab: one frame (modeling_sam.py:489 `... = image_embeddings.shape`) and the bare
    # `InternalTorchDynamoError: 'NoneType' object has no attribute 'shape'`
    diags = _scan("case-032.log")
    assert _where(diags[0]) == ("transformers/models/sam/modeling_sam.py", 489, "forward")


def test_the_users_call_of_a_compiled_function_is_no_culprit():
    lines = ["Traceback (most recent call last):", '  File "/srv/run.py", line 8, in <module>', "    out = cf(x)",
             "torch._dynamo.exc.InternalTorchDynamoError: 'NoneType' object has no attribute 'shape'"]
    diags = _lines(lines)
    assert diags and diags[0].culprit is None


def test_a_rule_under_a_dynamo_message_opens_the_user_stack():
    # `Unsupported: SKIPPED INLINING <code object indent ...>: `, a `------` rule, then the stack into xformers
    diags = _scan("case-033.log")
    assert _where(diags[0]) == ("xformers/ops/fmha/dispatch.py", 70, "_run_priority_list")


def test_torch_2_0_recompile_limit_body_cut_from_its_header_is_its_own_finding():
    # the first block's header out of view: `   function: '__collect__' (...:281)`, `   reasons:  ...`,
    # `to diagnose recompilation issues, see ...`; then two whole blocks
    diags = _scan("case-043.log")
    assert [d.signature for d in diags] == ["recompile-limit"] * 3
    assert [_where(d)[1:] for d in diags] == [(281, "__collect__"), (52, "distribute"), (564, "aggregate")]


# -- inductor's C++ build on macOS: Apple's clang has no OpenMP ----------------------------------------

def test_a_cpp_compile_error_on_macos_cut_before_its_output_gets_installing_openmp_first():
    # zsh prompt, torch 2.1-dev logging lines, `WON'T CONVERT fn /Users/.../inductor_mac_cpu.py line 3`,
    # BackendCompilerFailed / CppCompileError, cut at `Command:`
    diags = _scan("case-037.log")
    assert [d.signature for d in diags] == ["inductor-toolchain-failed"]
    assert "brew install libomp" in diags[0].fixes[0].title


def test_a_missing_python_header_on_macos_is_not_taken_for_openmp():
    lines = ["torch._dynamo.exc.BackendCompilerFailed: backend='inductor' raised:", "CppCompileError: C++ compile error",
             "", "Command:", "g++ /Users/me/x.cpp -shared", "", "Output:",
             "/Users/me/x.cpp:1:10: fatal error: Python.h: No such file or directory"]
    diags = _lines(lines)
    assert [d.signature for d in diags] == ["inductor-toolchain-failed"]
    assert "libomp" not in diags[0].fixes[0].title and "Python.h" in diags[0].fixes[0].title
