"""General mechanisms found missing on the real pastes of samples/pastes-heldout, each tested on the paste
that showed it (read by path, verbatim) and, where the mechanism is wider than that paste, on a second real
log."""

from __future__ import annotations

from pathlib import Path

import pytest

from crashlens.catalog import get_catalog
from crashlens.pipeline import combine, scan_lines

ROOT = Path(__file__).resolve().parents[1]
HELDOUT = ROOT / "samples" / "pastes-heldout"


def _scan(lines: list[str]):
    n, diags = scan_lines("paste", lines, get_catalog([]))
    return [d for d in combine([("paste", n, diags)]).diagnoses if d.family == "dynamo"]


def _paste(name: str) -> list[str]:
    return (HELDOUT / name).read_text(encoding="utf-8").splitlines()


def _where(d) -> tuple[str, int] | None:
    c = d.culprit
    return None if c is None else ("/".join(c.file.split("/")[-2:]), c.line)


# -- explain(): each break reason its own finding, at the frame that broke

def test_explain_report_gives_each_break_at_its_own_frame():
    """torch 2.0's explain() (fairseq, case 009): reasons 1-3 are one data-dependent jump reported once per
    enclosing frame (the call at transformer_encoder.py:207, the call at :127, the `if` at
    sinusoidal_positional_embedding.py:71); reason 4 is another jump (`if has_pads:` at :210)."""
    diags = _scan(_paste("case-009.log"))
    where = [_where(d) for d in diags]
    assert ("modules/sinusoidal_positional_embedding.py", 71) in where
    assert ("transformer/transformer_encoder.py", 210) in where
    # the callers of the first break are its chain, not findings of their own
    assert ("transformer/transformer_encoder.py", 207) not in where
    assert ("transformer/transformer_encoder.py", 127) not in where
    first = next(d for d in diags if _where(d) == ("modules/sinusoidal_positional_embedding.py", 71))
    assert [f.line for f in first.chain] == [207, 127, 71]
    assert not any(d.fatal for d in diags)  # explain() is a report of a run that went on


def test_explain_report_cut_at_the_end_of_input_is_complete_past_its_reasons():
    """A 2.13 explain() report (samples/raw/explain-print.log) ends in its ops, guards and compile times:
    followed by nothing, or by another rank's lines, it is the same complete finding."""
    lines = (ROOT / "samples" / "raw" / "explain-print.log").read_text(encoding="utf-8").splitlines()[1:]
    alone = _scan(lines)
    cut = _scan(lines[: next(i for i, ln in enumerate(lines) if ln.startswith("Compile Times:")) + 1])
    followed = _scan(["[2025-06-01 08:00:00 TP7] Load weight begin.", *lines,
                      "[2025-06-01 08:00:05 TP7] Init torch distributed begin."])
    assert len(alone) == len(cut) == len(followed) == 1
    assert alone[0].confidence == cut[0].confidence == followed[0].confidence
    assert alone[0].id == cut[0].id == followed[0].id


# -- the fingerprint: one finding per culprit line --------------------------------------------------------

def test_two_breaks_in_two_forwards_of_one_file_are_two_findings():
    """torch 2.0 cache_size_limit warnings (case 040): whisper's decoder `forward` (modeling_whisper.py:861)
    and its attention `forward` (:396) are two functions that hit the limit; both are named."""
    diags = _scan(_paste("case-040.log"))
    where = {_where(d) for d in diags}
    assert {("whisper/modeling_whisper.py", 861), ("whisper/modeling_whisper.py", 396)} <= where
    assert len({d.id for d in diags}) == len(diags)


def test_one_crash_printed_by_eight_ranks_is_still_one_finding():
    """The line in the fingerprint is the culprit's: every rank's copy of one crash names the same line."""
    lines = (ROOT / "samples" / "sglang-8rank-pcg-fp4.log").read_text(encoding="utf-8").splitlines()
    fatal = [d for d in _scan(lines) if d.fatal]
    assert len(fatal) == 1
    assert {o.rank for o in fatal[0].occurrences if o.rank} == {f"TP{i}" for i in range(8)}


# -- fake tensors: a custom op's missing fake, a fake whose signature is not the op's ----------------------

RAW13 = ROOT / "samples" / "raw" / "issue13"


def _first_fix(d) -> str:
    return (d.fixes[0].title + " " + d.fixes[0].detail).lower()


def test_fake_dispatch_not_implemented_on_a_custom_op_is_its_missing_fake():
    """vLLM's two-line paste (case 005): FakeTensorMode declined the custom op; the fix is a fake impl."""
    (d,) = _scan(_paste("case-005.log"))
    assert d.signature == "fake-dispatch-not-implemented" and d.fatal
    assert "vllm.min_latency_fused_qkv_a_proj.default" in d.title
    assert "register_fake" in _first_fix(d)


@pytest.mark.parametrize("version", ["2.4.1", "2.7.1"])
def test_fake_dispatch_recorded_names_the_op_and_the_subclass_advice(version):
    """A real run (an nn.Parameter subclass into a custom op under FakeTensorMode): one report, the op
    named."""
    (d,) = _scan((RAW13 / version / "fake-dispatch.log").read_text(encoding="utf-8").splitlines())
    assert d.signature == "fake-dispatch-not-implemented"
    assert "issue13.weight_clone.default" in d.title
    assert "register_fake" in _first_fix(d) and "param.data" in _first_fix(d)


def test_a_fake_whose_signature_is_not_the_ops_gets_a_signature_fix_not_register_fake():
    """SGLang's one-line paste (case 006): the fake exists, its parameters are wrong."""
    (d,) = _scan(_paste("case-006.log"))
    assert d.signature == "fake-impl-signature"
    fix = _first_fix(d)
    assert "signature" in fix and "default" in fix and "eps" in fix
    assert not fix.startswith("register a fake")


@pytest.mark.parametrize("version", ["2.4.1", "2.7.1", "2.13.0"])
def test_a_fake_signature_crash_is_one_report_with_the_users_call(version):
    """Real runs: torch logs fake_tensor's TypeError traceback, then dynamo raises with that message
    (2.4: in its headline; 2.7+: in the debug context): one crash, at the user's call of the op."""
    lines = (RAW13 / version / "fake-signature.log").read_text(encoding="utf-8").splitlines()
    fatal = [d for d in _scan(lines) if d.fatal]
    assert len(fatal) == 1
    (d,) = fatal
    assert d.signature == "fake-impl-signature" and "scaled_norm_fake" in d.title
    assert d.culprit is not None and d.culprit.function == "fake_signature"
    assert "signature" in _first_fix(d)


# -- `.item()`: the advice read from whatever of it survived; the fix the user sets comes first

def _warning_block(name: str) -> list[str]:
    """The graph-break warning of a real recording: its lines from `Graph break from` up to the logger's next
    record (the graph_breaks artifact, which would name the break by itself)."""
    lines = (ROOT / "samples" / "raw" / name).read_text(encoding="utf-8").splitlines()[1:]
    return lines[: next(i for i, ln in enumerate(lines) if "[__graph_breaks]" in ln)]


@pytest.mark.parametrize("cut", [1, 3])
def test_item_advice_cut_above_its_setting_lines_is_still_item(cut):
    """The paste starts after the advice's first line (case 038) or after its `or:`: the setting lines left
    (`capture_scalar_outputs = True`, `env TORCHDYNAMO_CAPTURE_SCALAR_OUTPUTS=1`) say it is `.item()`."""
    block = _warning_block("item-scalar-gb.log")
    assert "Graph break from `Tensor.item()`" in block[0]
    (d,) = _scan(block[cut:])
    assert d.signature == "item-scalar" and not d.fatal
    assert _where(d) == ("scenarios/item_scalar.py", 9)
    assert "capture_scalar_outputs" in d.fixes[0].title


def test_item_advice_cut_in_a_real_paste_gets_capture_scalar_outputs_first():
    (d,) = _scan(_paste("case-038.log"))
    assert d.signature == "item-scalar"
    assert "capture_scalar_outputs" in d.fixes[0].title


def test_a_src_layout_projects_subpackage_is_the_users_own_code():
    """case 039: /workspaces/molcrafts/molpot/src/molpot/potential/base.py calls .../potential/nnp/pinet.py,
    one project (PyPA src layout), not an installed library: no "opaque custom op at your call site", no
    "library patch"; the config the user sets comes first."""
    (d,) = _scan(_paste("case-039.log"))
    assert d.signature == "item-scalar"
    assert d.fixes[0].kind == "config" and "capture_scalar_outputs" in d.fixes[0].title
    assert not any(f.kind == "custom-op" or f.title.startswith("Library patch") for f in d.fixes)


def test_package_of_reads_the_src_layout():
    from crashlens.culprit import package_of, source_root
    from crashlens.records import Frame

    a = "/workspaces/molcrafts/molpot/src/molpot/potential/base.py"
    b = "/workspaces/molcrafts/molpot/src/molpot/potential/nnp/pinet.py"
    root = source_root((Frame(a, 32, "forward"), Frame(b, 343, "forward")))
    assert package_of(a, root) == package_of(b, root) == "molpot"
    # two checkouts side by side are still two packages
    c, e = "/work/repro/fakeserve/layers/rope.py", "/work/repro/fakeinfer/jit/core.py"
    root2 = source_root((Frame(c, 1, "f"), Frame(e, 2, "g")))
    assert package_of(c, root2) == "fakeserve" and package_of(e, root2) == "fakeinfer"


# -- a toolchain error inside BackendCompilerFailed: the environment fix, not "upgrade torch" ---------------

def test_triton_gcc_build_failure_gets_the_toolchain_fix_first():
    """vLLM's paste (case 013): BackendCompilerFailed whose inner error is gcc's CalledProcessError."""
    (d,) = _scan(_paste("case-013.log"))
    assert d.signature == "inductor-toolchain-failed"
    assert d.fixes[0].kind == "environment" and "/usr/local/gcc/bin/gcc" in d.fixes[0].title
    assert not any(f.kind == "upgrade" for f in d.fixes)


@pytest.mark.parametrize("version", ["2.4.1", "2.7.1", "2.13.0"])
def test_cpp_compile_error_recorded_names_the_compilers_own_complaint(version):
    """Real runs with a compiler that fails every build: BackendCompilerFailed (2.4) / InductorError (2.7+)
    around CppCompileError; the first fix quotes what the compiler said."""
    lines = (RAW13 / version / "broken-cxx.log").read_text(encoding="utf-8").splitlines()
    fatal = [d for d in _scan(lines) if d.fatal]
    assert len(fatal) == 1 and fatal[0].signature == "inductor-toolchain-failed"
    assert fatal[0].fixes[0].kind == "environment" and "Python.h" in fatal[0].fixes[0].title


@pytest.mark.parametrize("name", ["inductor-no-cxx.log", "t24-inductor-no-cxx.log"])
def test_no_compiler_at_all_stays_its_own_signature(name):
    lines = (ROOT / "samples" / "raw" / name).read_text(encoding="utf-8").splitlines()
    assert [d.signature for d in _scan(lines) if d.fatal] == ["inductor-no-cxx-compiler"]
