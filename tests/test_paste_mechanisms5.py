"""General mechanisms that real bug-report pastes (samples/pastes-heldout4, read by path) exposed.

Each test names the mechanism, not the case: the paste is only the real text that shows it.
"""

from __future__ import annotations

import pytest

from conftest import fix_titles, paste_scanner

from crashlens.frame import frame_line

_scan = paste_scanner("pastes-heldout4")


# -- torch.compile refusing the interpreter: a torch message family with a known fix per release ---------

@pytest.mark.parametrize("name", ["case-024.log", "case-025.log"])
def test_dynamo_not_supported_on_this_python_gets_the_release_or_the_interpreter_that_works(name):
    # 024: a plain traceback (Windows paths); 025: the same error in pytest E-lines of a nix build log
    diags = _scan(name)
    assert [d.signature for d in diags] == ["python-version-unsupported"]
    first_two = " ".join(fix_titles(diags[0])[:2])
    assert "torch 2.4 or later" in first_two and "python<3.12" in first_two


# -- line prefixes: a nix build log's `name> `, Jenkins' bracketed ISO timestamp -----------------------

def test_nix_build_log_prefix_comes_off_before_pytest_e():
    line = frame_line("x", 1, "diffusers> E   RuntimeError: Dynamo is not supported on Python 3.12+")
    assert (line.text, line.level) == ("RuntimeError: Dynamo is not supported on Python 3.12+", "ERROR")
    # a word and `>` inside a line's text is no prefix
    assert frame_line("x", 1, "x = a > b").text == "x = a > b"


def test_jenkins_iso_timestamp_prefix_comes_off_even_on_a_blank_line():
    line = frame_line("x", 1, "[2025-07-31T02:13:19.873Z] Set TORCHDYNAMO_VERBOSE=1 for the internal stack trace")
    assert line.text == "Set TORCHDYNAMO_VERBOSE=1 for the internal stack trace"
    assert frame_line("x", 1, "[2025-07-31T02:13:19.873Z] ").text == ""


def test_dynamo_banner_under_a_jenkins_timestamp_is_a_compile_failure():
    diags = _scan("case-042.log")
    assert [d.signature for d in diags] == ["compile-error-out-of-view"]


# -- notebooks: a path rendered as a markdown link; Colab's IPython 7 traceback cut before its message --

def test_markdown_link_around_a_path_reads_as_the_path():
    line = frame_line("x", 1, '  File "[/tmp/ipykernel_1/2.py](https://vscode-remote+ssh.vscode-cdn.net/tmp/'
                              'ipykernel_1/2.py)", line 155, in forward')
    assert line.text == '  File "/tmp/ipykernel_1/2.py", line 155, in forward'
    assert frame_line("x", 1, "x = d[k](y)").text == "x = d[k](y)"  # an index then a call is no link


def test_explain_break_reason_under_vscode_links_names_the_notebook_cell_line():
    diags = _scan("case-028.log")
    c = diags[0].culprit
    assert (c.file, c.line, c.function) == ("/tmp/ipykernel_1302757/1698778135.py", 155, "forward")


def test_colab_traceback_cut_before_its_message_takes_the_headers_dynamo_type():
    # `InternalTorchDynamoError    Traceback (most recent call last)`, a `<cell line: 15>` frame, Colab's
    # `21 frames` fold, a module.py frame, then the paste ends
    diags = _scan("case-009.log")
    assert len(diags) == 1 and diags[0].family == "dynamo" and diags[0].fatal
    assert diags[0].exception[0] == "InternalTorchDynamoError"


# -- torch.compile()'s own set-up frames: a failure raised there is a compile failure -------------------

def test_a_traceback_cut_inside_torch_compile_and_dynamo_optimize_is_a_compile_failure():
    # Jupyter on Windows: Cell In[4] -> torch\__init__.py:1723 in compile -> eval_frame.py:583 in optimize,
    # the message (a platform check) past the cut
    diags = _scan("case-026.log")
    assert [d.signature for d in diags] == ["compile-error-out-of-view"]
    assert diags[0].fatal


# -- inductor without a working triton: install it in the interpreter that runs the model -------------

def test_no_working_triton_gets_installing_triton_first():
    # message-only paste: `backend='inductor' raised:`, the RuntimeError, dynamo's banners
    diags = _scan("case-031.log")
    assert [d.signature for d in diags] == ["inductor-no-triton"]
    first = diags[0].fixes[0].title
    assert "python -m pip install triton" in first and "suppress_errors" not in first


# -- a dynamo message printed without its exception line: its 2.7+ sections say what was rejected -----

def test_explanation_sections_without_the_exception_line_are_a_dynamo_failure_of_their_family():
    # `print(f"Original exception:\n {e}")` of an Unsupported: headline, Explanation, Hint, debug context,
    # `from user code:` with only the source line
    diags = _scan("case-035.log")
    assert [d.signature for d in diags] == ["item-scalar"]
    assert "capture_scalar_outputs" in diags[0].fixes[0].title


def test_an_explanation_that_does_not_name_dynamo_starts_nothing():
    lines = ["  Explanation: the cache was cold, so the first request took longer.",
             "  Hint: warm it up with a dummy request."]
    from crashlens.pipeline import scan_lines
    from crashlens.catalog import get_catalog
    _, diags = scan_lines("x", iter(lines), get_catalog([]))
    assert diags == []


# -- torch's own "data pointer of a fake tensor" error is raised only under tracing -------------------

def test_fake_tensor_data_pointer_error_names_the_kernel_frame_and_a_custom_op_first():
    # one frame of flash-attn's CuTe interface, then the RuntimeError wrapped over four lines by the reporter
    diags = _scan("case-008.log")
    assert [d.signature for d in diags] == ["fake-tensor-data-pointer"]
    c = diags[0].culprit
    assert (c.file, c.line, c.function) == ("flash_attn/cute/interface.py", 333, "_flash_attn_fwd")
    assert diags[0].fixes[0].kind == "custom-op" and "register_fake" in diags[0].fixes[0].title


def test_a_storage_error_without_the_tracing_wording_is_no_dynamo_crash():
    # the plain c10 message (no `(e.g. FakeTensor, FunctionalTensor)`): an eager tensor without storage
    from crashlens.catalog import get_catalog
    from crashlens.pipeline import scan_lines
    lines = ["Traceback (most recent call last):", '  File "/srv/app/k.py", line 3, in run',
             "    p = x.data_ptr()", "RuntimeError: Cannot access data pointer of Tensor that doesn't have storage"]
    _, diags = scan_lines("x", iter(lines), get_catalog([]))
    assert [d for d in diags if d.family == "dynamo"] == []


# -- a library whose functions dynamo skipped and whose newer release registers them -----------------

def test_einops_skipped_by_dynamo_gets_the_einops_release_that_registers_its_ops_first():
    diags = _scan("case-028.log")
    assert diags[0].signature == "skipped-function"
    assert "einops>=0.7" in diags[0].fixes[0].title and "allow_ops_in_compiled_graph" in diags[0].fixes[0].title


# -- a terminal wrapped the long frame lines: the rest, on the next line, carries no prefix ----------

def test_frame_lines_wrapped_at_the_terminal_width_are_put_back_together():
    # vLLM's `(VllmWorker rank=3 pid=285) ERROR ... [multiproc_executor.py:380]   File ".../convert_frame.py", li`
    # then `ne 715, in compile_inner`: convert_frame's own frames, the exception out of view
    diags = _scan("case-001.log")
    assert [d.signature for d in diags] == ["compile-error-out-of-view"]
    assert diags[0].fatal and list(diags[0].ranks) == ["VllmWorker rank=3"]


def test_a_wrapped_frame_line_is_one_frame_and_a_lone_file_line_starts_no_crash():
    from crashlens.catalog import get_catalog
    from crashlens.pipeline import scan_lines
    head = ['  File "/venv/lib/python3.12/site-packages/torch/_dynamo/symbolic_convert.py", li', "ne 3, in step",
            "    self.dispatch_table[inst.opcode](self, inst)"]
    _, diags = scan_lines("x", iter(head), get_catalog([]))
    assert [d.signature for d in diags] == ["compile-error-out-of-view"]
    _, none = scan_lines("x", iter(['  File "notes.txt", created', "done."]), get_catalog([]))
    assert none == []
