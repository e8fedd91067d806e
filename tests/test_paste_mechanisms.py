"""General mechanisms that real bug-report pastes (samples/pastes-heldout2, read by path) exposed.

Each test names the mechanism, not the case: the paste is only the real text that shows it.
"""

from __future__ import annotations

import pytest

from conftest import SAMPLES, paste_scanner

from crashlens.cli.scan import run_scan
from crashlens.frame import frame_line

HELDOUT2 = SAMPLES / "pastes-heldout2"


_scan = paste_scanner("pastes-heldout2")


# -- pytest `E` lines: the width follows the failing source line's indentation -------------------

@pytest.mark.parametrize("width", [7, 11, 15])
def test_pytest_e_prefix_of_any_source_indent_comes_off(width):
    line = frame_line("x", 1, "E" + " " * width + "torch._dynamo.exc.BackendCompilerFailed: backend='aot_eager' raised:")
    assert line.text == "torch._dynamo.exc.BackendCompilerFailed: backend='aot_eager' raised:"
    # a traceback quoted inside the message keeps its own two blanks
    frame = frame_line("x", 2, "E" + " " * width + '  File "/a/b.py", line 3, in f')
    assert frame.text == '  File "/a/b.py", line 3, in f'


def test_pytest_exception_under_a_nested_source_line_is_found():
    # `>           r = torch._to_functional_tensor(t)` then `E           torch._dynamo.exc...` (E + 11)
    diags = _scan("case-015.log")
    assert [d.signature for d in diags] == ["backend-compiler-failed"]
    assert diags[0].exception[0] == "torch._dynamo.exc.BackendCompilerFailed"


# -- pytest's short traceback: `PATH:LINE: in FUNC` frames ---------------------------------------

def test_pytest_short_frames_of_dynamo_machinery_are_a_compile_failure():
    # `--tb=short` frames only, all inside torch/_dynamo, the `E` line cut off
    diags = _scan("case-020.log")
    assert [d.signature for d in diags] == ["compile-error-out-of-view"]
    assert diags[0].fatal


def test_pytest_short_frames_carry_the_exception_and_the_user_frame(tmp_path):
    # the frame lines of case-020, then the user's own test frame and pytest's `E   ` exception line
    real = (HELDOUT2 / "case-020.log").read_text().splitlines()[1:5]
    log = tmp_path / "short.log"
    log.write_text("\n".join([
        "tests/test_model.py:31: in test_compiled_step", "    out = compiled(x)", *real,
        "E   torch._dynamo.exc.Unsupported: call_function UserDefinedClassVariable() [] {}", ""]))
    diags = run_scan((str(log),), (), audit=False).diagnoses
    assert len(diags) == 1 and diags[0].exception[0] == "torch._dynamo.exc.Unsupported"


def test_pytest_short_frames_of_plain_code_are_no_dynamo_crash(tmp_path):
    log = tmp_path / "plain.log"
    log.write_text("tests/test_io.py:12: in test_read\n    data = load(p)\nsrc/pkg/io.py:40: in load\n"
                   "    return json.loads(p.read_text())\nE   ValueError: bad json\n")
    assert all(d.family != "dynamo" for d in run_scan((str(log),), (), audit=False).diagnoses)


# -- the 2022 standalone `torchdynamo` package's spelling --------------------------------------

def test_torchdynamo_package_recompile_limit_is_recognised_with_its_function():
    # `[date] torchdynamo.convert_frame: [WARNING] torchdynamo hit config.cache_size_limit (64)`
    diags = _scan("case-018.log")
    assert [d.signature for d in diags] == ["recompile-limit"]
    c = diags[0].culprit
    assert (c.file.endswith("torchvision/models/resnet.py"), c.line, c.function) == (True, 284, "forward")
    assert "strides mismatch" in diags[0].fixes[0].title  # 2022's `reasons:  ["..."]` is the reason


def test_torchdynamo_exc_type_is_a_dynamo_failure(tmp_path):
    # the 2022 package's exception type, as its tracebacks end (frames under site-packages/torchdynamo/)
    log = tmp_path / "old.log"
    log.write_text('Traceback (most recent call last):\n  File "/home/u/train.py", line 9, in <module>\n'
                   "    model(x)\n"
                   '  File "/usr/lib/python3.9/site-packages/torchdynamo/convert_frame.py", line 330, in _convert_frame_assert\n'
                   "    return _compile(\n"
                   "torchdynamo.exc.Unsupported: call_function BuiltinVariable(open) [ConstantVariable(str)] {}\n")
    diags = run_scan((str(log),), (), audit=False).diagnoses
    assert len(diags) == 1 and diags[0].family == "dynamo" and diags[0].fatal
    assert diags[0].culprit is None or "torchdynamo/" not in diags[0].culprit.file


# -- the recompile-limit warning from its body lines, its header cut ---------------------------

def test_recompile_limit_warning_without_its_header_is_recognised():
    # starts at `   function: 'forward' (.../modeling_llama.py:318)` under a [rank0]: glog prefix
    diags = _scan("case-003.log")
    assert [d.signature for d in diags] == ["recompile-limit"]
    c = diags[0].culprit
    assert c.file.endswith("transformers/models/llama/modeling_llama.py") and (c.line, c.function) == (318, "forward")
    assert not diags[0].fatal


def test_a_function_line_alone_is_not_a_recompile_warning(tmp_path):
    log = tmp_path / "x.log"
    log.write_text("INFO starting\n   function: 'main' (/srv/app/run.py:12)\nINFO done\n")
    assert run_scan((str(log),), (), audit=False).diagnoses == ()


# -- TORCH_LOGS=graph_breaks entries that start at `Reason:`; glog prefixes with the head elided -------

def test_elided_glog_prefix_comes_off_and_keeps_its_artifact():
    line = frame_line("x", 1, ".../torch/_dynamo/symbolic_convert.py:436] [16/2] [__graph_breaks] User code traceback:")
    assert (line.text, line.artifact, line.prefixed) == ("User code traceback:", "graph_breaks", True)


def test_graph_breaks_entry_from_its_reason_line_routes_on_the_message():
    # `Reason: Unsupported: Graph break due to unsupported builtin flash_attn_2_cuda.PyCapsule.fwd ...`
    diags = _scan("case-005.log")
    assert [d.signature for d in diags] == ["c-extension-call"]
    d = diags[0]
    assert d.callee == "flash_attn_2_cuda.PyCapsule.fwd" and not d.fatal
    assert d.culprit is not None and d.culprit.file.endswith("mixers/slide_attention.py")  # the user stack's last frame
    assert "custom op" in d.fixes[0].title


def test_a_reason_line_outside_the_graph_breaks_log_is_nothing(tmp_path):
    log = tmp_path / "x.log"
    log.write_text("Reason: Unsupported: the request body was empty\n")
    assert run_scan((str(log),), (), audit=False).diagnoses == ()


# -- turning compilation off is never a fix -------------------------------------------------------

from crashlens.catalog import get_catalog  # noqa: E402
from crashlens.diagnose import DIAGNOSTIC_STEP, order_fixes  # noqa: E402
from crashlens.records import Fix, Frame  # noqa: E402
from crashlens.sigcheck import compile_off_flags, compile_off_problems  # noqa: E402

_OFF_WORDS = ("--enforce-eager", "-O0", "--disable-piecewise-cuda-graph", "turn the compiled path off",
              "TORCHDYNAMO_DISABLE", "suppress_errors")


def test_vllm_compile_off_flag_is_not_the_first_fix():
    # a vLLM observed-exception in a third-party (vllm) frame: the flag used to come first
    d = _scan("case-016.log")[0]
    assert not any(w in d.fixes[0].title for w in ("turn the compiled path off", "Until it is fixed"))
    off = [f for f in d.fixes if f.title.startswith(DIAGNOSTIC_STEP)]
    assert off and d.fixes.index(off[0]) == len(d.fixes) - 1


def test_every_compile_off_remedy_in_the_catalog_is_marked():
    cat = get_catalog()
    assert {"--enforce-eager", "-O0", "--disable-piecewise-cuda-graph"} <= compile_off_flags(cat)
    assert compile_off_problems(cat) == []


@pytest.mark.parametrize("owner", ["user", "third-party", "torch"])
def test_no_signature_can_put_a_compile_off_remedy_first(owner):
    # catalog-wide: every signature's own fixes, the library rules' and the third-party set, in the order
    # diagnose gives them, whoever owns the culprit and whether or not each fix edits the culprit's file
    cat = get_catalog()
    culprit = Frame("/site-packages/pkg/mod.py", 3, "f")
    extra = [(f, r.id) for r in cat.libraries for f in r.fixes] + [(f, "x") for f in cat.third_party_fixes]
    for sig in cat.signatures:
        templates = [(f, sig.id) for f in sig.fixes] + extra
        for on_culprit in (False, True):
            fixes = [Fix(t.rank, t.kind, t.title, t.detail, culprit.file if on_culprit else None, None, t.safety, src,
                         compile_off=t.compile_off) for t, src in templates]
            first = order_fixes(fixes, owner, culprit, sig)[0]
            assert not first.compile_off, (sig.id, first.title)
            assert not any(w in first.title for w in _OFF_WORDS) or "diagnostic step" in first.title.lower(), (sig.id, first.title)


# -- a custom op only where one can work: never for an nn.Module's forward ---------------------------

def test_no_custom_op_for_a_module_forward():
    # from user code: encoder.py `feats = self.encoder.forward(x, mask=mask)` into x_transformers' forward
    d = _scan("case-013.log")[0]
    assert d.culprit.function == "forward"
    assert [f for f in d.fixes if f.kind == "custom-op"] == []
    assert d.fixes[0].kind != "report"  # the library line's own fix is still offered


# -- "error out of view" only when no error is in view ----------------------------------------------

@pytest.mark.parametrize("name", [
    "case-009.log",  # glog `C... scheduler.py:1059] Error in codegen for ComputedBuffer(...)`, then BackendCompilerFailed
    "case-010.log",  # torch 2.1's `torch._inductor.scheduler: [CRITICAL] Error in codegen for ComputedBuffer` (CI timestamps)
    "case-012.log",  # frames inside output_graph.call_user_compiler under `raise BackendCompilerFailed(`
])
def test_backend_failure_in_view_is_not_reported_as_out_of_view(name):
    diags = _scan(name)
    assert [d.signature for d in diags] == ["backend-compiler-failed"] and diags[0].fatal


# -- recompiles on a per-instance guard: the limit must cover the instances --------------------------

@pytest.mark.parametrize("name", [
    "case-002.log",  # recompiles: ___check_obj_id(L['self']._modules['attn'].processor, ...) per block
    "case-003.log",  # recompile limit: last reason L['self']._modules['self_attn'].layer_idx == 0
])
def test_per_instance_guard_gets_the_limit_first(name):
    d = _scan(name)[0]
    first = d.fixes[0]
    assert "recompile_limit" in first.title and "cache_size_limit" in first.title
    assert "regional compilation" in first.detail
    assert "pass that value as a tensor" not in first.title


def test_a_value_that_changes_per_call_still_gets_the_guard_fix_first():
    # a real torch 2.13 run: `step == 3`, an int argument that changes every call
    d = run_scan((str(SAMPLES / "raw" / "recompile-limit-nofullgraph.log"),), (), audit=False).diagnoses[0]
    assert d.fixes[0].title.startswith("Stop the guard")
