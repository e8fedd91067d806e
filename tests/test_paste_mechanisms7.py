"""General mechanisms that real bug-report pastes (samples/pastes-heldout6, read by path) exposed.

Each test names the mechanism, not the case: the paste is only the real text that shows it.
"""

from __future__ import annotations

import pytest

from conftest import fix_titles, paste_scanner

from crashlens.evidence import is_compile_machinery
from crashlens.frame import frame_line
from crashlens.records import Frame

_scan = paste_scanner("pastes-heldout6")


def _one_compile_failure_out_of_view(name: str):
    diags = _scan(name)
    assert [(d.family, d.fatal, d.signature) for d in diags] == [("dynamo", True, "compile-error-out-of-view")]
    return diags[0]


# -- compile machinery: frames that only run while torch.compile compiles, the exception line out of view --

def test_aot_autograd_compile_of_the_joint_graph_is_compile_machinery_even_with_indentation_lost():
    # aot_wrapper_synthetic_base / aot_dispatch_autograd -> compile_fx's fw_compiler_base, every line flush left
    _one_compile_failure_out_of_view("case-008.log")


def test_inductor_compile_worker_pool_initializer_is_compile_machinery():
    # Ray workers: concurrent.futures' `Exception in initializer:` into codecache.py's `init` (watchdog thread)
    _one_compile_failure_out_of_view("case-004.log")


def test_torchair_npu_backend_converting_the_captured_graph_is_compile_machinery():
    _one_compile_failure_out_of_view("case-018.log")


def test_vllm_backend_piecewise_compile_of_the_split_graph_is_compile_machinery():
    _one_compile_failure_out_of_view("case-034.log")


@pytest.mark.parametrize("frame", [
    # the runs of compiled code in the same files: a crash there is a run's, not a compile's
    Frame("/x/vllm/compilation/backends.py", 608, "__call__", "return self.compiled_graph_for_general_shape(*args)"),
    Frame("/x/torch_npu/dynamo/torchair/npu_fx_compiler.py", 90, "__call__", "return self.runner(*args, **kwargs)"),
    Frame("/x/torch/_functorch/_aot_autograd/runtime_wrappers.py", 495, "wrapper", "return compiled_fn(runtime_args)"),
    Frame("/x/torch/_inductor/codecache.py", 1611, "__call__", "return self.current_callable(inputs)"),
])
def test_runs_of_compiled_code_beside_the_compile_steps_are_not_compile_machinery(frame):
    assert not is_compile_machinery(frame)


def test_the_compile_steps_themselves_are_compile_machinery():
    for f in (Frame("/x/vllm/compilation/backends.py", 616, "__call__", "PiecewiseCompileInterpreter(self.split_gm,"),
              Frame("/x/torch/_inductor/compile_worker/utils.py", 36, "_async_compile_initializer", "x"),
              Frame("/x/torch/_functorch/_aot_autograd/jit_compile_runtime_wrappers.py", 1, "aot_dispatch_autograd")):
        assert is_compile_machinery(f)


# -- framing: ESC written out as text; a first line that starts inside a server's prefix ----------------

def test_colour_escape_with_esc_spelled_out_comes_off():
    line = frame_line("x", 1, "ESC[1;36m(VllmWorkerProcess pid=62)ESC[0;0m ERROR 12-26 16:20:28 "
                              "multiproc_worker_utils.py:236]     raise RuntimeError(")
    assert (line.text, line.rank, line.level) == ("    raise RuntimeError(", "VllmWorkerProcess", "ERROR")
    assert frame_line("x", 1, "\u241b[31mTraceback (most recent call last):").text == "Traceback (most recent call last):"
    assert frame_line("x", 1, "press ESC to quit").text == "press ESC to quit"


def test_first_line_cut_inside_the_vllm_prefix_keeps_its_frame():
    line = frame_line("x", 1, 'multiproc_worker_utils.py:236]   File "/p/torch/_inductor/scheduler.py", line 3348, '
                              "in create_backend")
    assert line.text == '  File "/p/torch/_inductor/scheduler.py", line 3348, in create_backend'
    assert frame_line("x", 1, "d = {'a.py:1]': 2}").text == "d = {'a.py:1]': 2}"


def test_ansi_text_and_cut_prefix_paste_is_the_compile_failure_it_shows():
    diags = _scan("case-027.log")
    assert diags and all(d.family == "dynamo" and d.fatal for d in diags)


# -- a compiled graph run on inputs of another graph: a stale / colliding compile cache ------------------

def test_compiled_graph_unpacking_the_wrong_number_of_inputs_is_a_compile_cache_mismatch():
    diags = _scan("case-022.log")
    assert [(d.family, d.fatal, d.signature) for d in diags] == [("dynamo", True, "compiled-graph-input-mismatch")]
    assert "VLLM_DISABLE_COMPILE_CACHE" in fix_titles(diags[0])[0]
    assert diags[0].culprit is None  # inductor's generated module is nobody's code to edit


# -- a combo/foreach kernel on inductor's C++ backend: the torch release decides -------------------------

def test_combo_kernel_assertion_on_cpu_offers_the_torch_release_that_compiles():
    diags = _scan("case-029.log")
    assert [d.signature for d in diags] == ["inductor-combo-kernel-cpu"]
    assert "torch 2.8" in fix_titles(diags[0])[0]

