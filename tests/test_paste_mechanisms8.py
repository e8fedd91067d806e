"""General mechanisms that real bug-report pastes (samples/pastes-heldout8, read by path) exposed.

Each test names the mechanism, not the case: the paste is only the real text that shows it.
"""

from __future__ import annotations

from conftest import SAMPLES

from crashlens.cli.scan import run_scan
from crashlens.frame import frame_physical

HELDOUT8 = SAMPLES / "pastes-heldout8"


def _scan(name: str):
    return run_scan((str(HELDOUT8 / name),), (), audit=False).diagnoses


def _dynamo(name: str):
    return [d for d in _scan(name) if d.family == "dynamo"]


def _first_fix(d) -> str:
    f = d.fixes[0]
    return f"{f.title} {f.detail}"


# -- compile machinery whose exception line is out of view ----------------------------------------------

def test_the_2022_standalone_torchdynamo_package_is_compile_machinery():
    # torchdynamo/convert_frame.py `_convert_frame_assert` (before dynamo moved into torch as torch._dynamo)
    diags = _dynamo("case-011.log")
    assert [d.signature for d in diags] == ["compile-error-out-of-view"]


def test_the_backend_wrappers_dynamo_calls_with_the_graph_are_compile_machinery():
    # after_dynamo's WrapBackendDebug and torch/__init__.py's inductor wrapper (`return compile_fx(`), in
    # glog W lines of convert_frame with a blank line after each
    diags = _dynamo("case-028.log")
    assert [d.signature for d in diags] == ["compile-error-out-of-view"]
    # convert_frame's WARNING (2.7.1 line 1280: `log.warning(error_msg, exc_info=True)`) is the failure
    # suppress_errors swallowed: a finding of a run that went on, also where glog names the file from
    # `Lib\site-packages\` up
    assert not diags[0].fatal


# -- Windows: MSVC's cl.exe not on PATH, torch.compile refused on the platform -------------------------

def test_msvc_not_on_path_says_developer_prompt_first():
    # the message (pytest summary lines, a quoted paste) or, with the message out of view, the check's frame
    for name in ("case-034.log", "case-035.log", "case-036.log"):
        diags = _dynamo(name)
        assert diags and diags[0].signature == "inductor-no-cxx-compiler", name
        assert "vcvarsall" in _first_fix(diags[0]) and "cl.exe" in _first_fix(diags[0]), name


def test_prose_glued_before_the_first_frame_is_split_off():
    lines = frame_physical("x", 1, 'Or more precisely :  File "C:\\p\\torch\\_dynamo\\eval_frame.py", line 375, in check_if_dynamo_supported')
    assert [ln.text for ln in lines] == ["Or more precisely :",
                                         'File "C:\\p\\torch\\_dynamo\\eval_frame.py", line 375, in check_if_dynamo_supported']
    # a mark leading a frame is no prose (the guard's user stack), nor is a wrapped log prefix's rest
    assert len(frame_physical("x", 1, '    -   File "/p/m.py", line 10, in f')) == 1
    assert len(frame_physical("x", 2, 'multiproc_executor.py:671]   File "/p/sampling.py", line 24, in sa')) == 1


def test_a_traceback_pasted_indented_keeps_its_exception_line_and_windows_is_refused_up_front():
    # `    RuntimeError: ...` under the source line `        raise RuntimeError(...)`: the exception line
    diags = _dynamo("case-037.log")
    assert [d.signature for d in diags] == ["windows-unsupported"]
    assert "torch>=2.5" in _first_fix(diags[0])


# -- Triton cannot find the driver library ---------------------------------------------------------------

def test_triton_without_libcuda_says_ldconfig_first():
    diags = _dynamo("case-031.log")
    assert [d.signature for d in diags] == ["triton-libcuda-not-found"]
    assert "ldconfig" in _first_fix(diags[0])


# -- what survives of a failure in torch's own logs -----------------------------------------------------

def test_inductors_triton_compilation_failed_log_is_a_backend_failure():
    # glog E lines of runtime/triton_heuristics.py (its log.exception, then it raises), the error past the cut
    for name in ("case-009.log", "case-010.log"):
        diags = _dynamo(name)
        assert [d.signature for d in diags] == ["backend-compiler-failed"], name
        assert diags[0].fatal, name


def test_inductor_error_log_needs_an_inductor_logger():
    # the same words from a logger that is not inductor's are no evidence
    from crashlens.pipeline import scan_lines
    from crashlens.catalog import get_catalog
    _, diags = scan_lines("x", iter(["E0519 00:53:54.060000 1 mylib/kernels.py:10] Triton compilation failed: k0"]),
                          get_catalog([]))
    assert [d for d in diags if d.family == "dynamo"] == []


def test_a_dynamo_logger_warning_without_its_timestamp_is_a_finding():
    # `torch._dynamo.utils: [WARNING] Unsupported: ...` (torch 2.0's format, its `[date]` head cut): what
    # dynamo is about to reject; a warning, not the crash (the exception, if any, is out of view)
    diags = _dynamo("case-006.log")
    assert len(diags) == 1 and not diags[0].fatal
    assert "meta converter nyi" in " ".join(diags[0].exception or ())


def test_a_developer_debug_context_line_alone_is_a_dynamo_message():
    # 2.6+'s unimplemented_v2 section, the exception line out of view: the operator it names is routed on
    diags = _dynamo("case-007.log")
    assert len(diags) == 1
    assert "aten._transformer_encoder_layer_fwd.default" in " ".join(f.title for f in diags[0].fixes)


# -- a failed recompile guard's source comment is the culprit ---------------------------------------------

def test_a_failed_guard_line_alone_names_the_users_line_it_came_from():
    # `[__recompiles]     - 0/0: GUARD  # SRC  # FILE:LINE in FUNC (_dynamo/utils.py:3333 in run_node)`
    diags = _dynamo("case-046.log")
    assert len(diags) == 1 and not diags[0].fatal
    c = diags[0].culprit
    assert (c.file, c.line, c.function) == (
        "diffusers/models/transformers/auraflow_transformer_2d.py", 85, "pe_selection_index_based_on_dim")


# -- an application's logged error record that names the exception it caught ------------------------------

def test_the_logging_cookbook_format_comes_off_and_its_error_names_the_exception():
    from crashlens.frame import frame_line
    line = frame_line("x", 1, "2025-10-30 21:54:45,628 - lib.pipeline_manager - ERROR - Failed: OSError: boom")
    assert (line.logger, line.level, line.text) == ("lib.pipeline_manager", "ERROR", "Failed: OSError: boom")
    # `Failed to load pipeline X: CalledProcessError: Command '['/usr/bin/gcc', ...cuda_utils.c...]'`, then
    # dynamo's footer: Triton's launcher build failed (Python.h missing just above): the toolchain's fix
    diags = _dynamo("case-033.log")
    assert [d.signature for d in diags] == ["inductor-toolchain-failed"]
    assert "python3-dev" in _first_fix(diags[0])


def test_prose_before_an_exception_name_is_still_prose_outside_a_logged_error():
    from crashlens.catalog import get_catalog
    from crashlens.pipeline import scan_lines
    _, diags = scan_lines("x", iter(["We then saw: CalledProcessError: Command '['/usr/bin/gcc']' returned 1",
                                     'Set TORCHDYNAMO_VERBOSE=1 for the internal stack trace']), get_catalog([]))
    assert [d.signature for d in diags if d.family == "dynamo"] != ["inductor-toolchain-failed"]


# -- a first frame whose head the reporter elided; numpy math on a Python number -------------------------

def test_a_frame_with_its_head_elided_is_still_the_frame_and_numpy_scalar_math_says_math():
    # `the error is .......diffusers/models/transformers/transformer_flux.py", line 519, in forward`, then
    # `int(np.ceil(interval_control))` and dynamo's banners (the reporter's fix: math.ceil)
    diags = _dynamo("case-005.log")
    assert len(diags) == 1
    c = diags[0].culprit
    assert (c.file, c.line, c.function) == ("diffusers/models/transformers/transformer_flux.py", 519, "forward")
    assert diags[0].signature == "numpy-scalar-math"
    assert "math.ceil" in diags[0].fixes[0].title


def test_an_elided_path_inside_prose_is_no_frame_without_its_line_and_function():
    from crashlens.evidence import FRAME_ELIDED
    assert FRAME_ELIDED.match('see .../x/model.py", line 3, in f') is not None
    assert FRAME_ELIDED.match("see .../x/model.py for the details") is None
