"""Routing on dynamo's own `Hint:` lines (torch 2.7+), read from real recordings (samples/corpus/pending).

A graph break no signature names gets dynamo's advice for it as the first fix (not the family of the nearest
wording); the canned hints (report it,
a Dynamo bug, hard to debug) are never offered as that advice, nor is advice crashlens never gives; the
"would fail in eager too" hint makes the code fix come first.
"""

from __future__ import annotations

import gzip
import json

import pytest

from conftest import SAMPLES

from crashlens.catalog import get_catalog
from crashlens.cli.scan import run_scan
from crashlens.diagnose import dynamo_hints
from crashlens.frame import frame_lines
from crashlens.traceback import extract_records

PENDING = SAMPLES / "corpus" / "pending"
RAW = SAMPLES / "raw"
FORBIDDEN = ("fullgraph=false", "suppress_errors", "torchdynamo_disable", "removing the `torch.compile` call",
             'set_stance("force_eager")')


def _recording(release: str, name: str) -> tuple[str, dict]:
    folder = PENDING / release
    if not (folder / f"{name}.log.gz").is_file():
        pytest.skip("not recorded here")
    info = json.loads((folder / "index.json").read_text())["recordings"][name]
    return gzip.decompress((folder / f"{name}.log.gz").read_bytes()).decode(), info


def _fatal(text: str, tmp_path):
    p = tmp_path / "run.log"
    p.write_text(text)
    return [d for d in run_scan((str(p),), (), audit=False).diagnoses if d.fatal]


def _marker_line(rel: str, marker: str) -> int:
    src = (SAMPLES / "repro" / rel).read_text().splitlines()
    return next(i for i, ln in enumerate(src, 1) if f"# expect: {marker}" in ln)


@pytest.mark.parametrize("release", ["t2.1.2", "t2.4.1", "t2.7.1", "t2.13.0"])
def test_a_requested_graph_break_under_fullgraph_is_removed(release, tmp_path):
    # 2.7+ "Call to `torch._dynamo.graph_break()`" (GB0025), 2.2-2.6 "skip function graph_break in file
    # .../_dynamo/decorators.py", 2.1 "call_function graph_break in skip_files ..."
    text, info = _recording(release, "explicit-graph-break")
    assert info["exit_code"] != 0
    fatal = _fatal(text, tmp_path)
    assert [d.signature for d in fatal] == ["explicit-graph-break"]
    d = fatal[0]
    assert d.culprit is not None and d.culprit.file.endswith("scenarios/explicit_graph_break.py")
    assert d.culprit.line == _marker_line("scenarios/explicit_graph_break.py", "graph-break-call")
    assert d.fixes[0].title.startswith("Remove the `torch._dynamo.graph_break()` call at scenarios/explicit_graph_break.py:")


def test_canned_hints_are_not_offered_as_advice(tmp_path):
    # GB8977 (2.13): its only hint is graph_break_hints.SUPPORTABLE ("Please report an issue to PyTorch if you
    # encounter this graph break often")
    text = (RAW / "dynamo-generic.log").read_text()
    assert "It may be possible to write Dynamo tracing rules" in text
    fatal = _fatal(text, tmp_path)
    assert fatal and not any("dynamo's own hint" in f.title for f in fatal[0].fixes)


@pytest.mark.parametrize("release", ["t2.1.2", "t2.4.1", "t2.7.1", "t2.13.0"])
def test_a_break_dynamo_says_fails_in_eager_too_gets_the_code_fix_first(release, tmp_path):
    # 2.7+: "Attempted to read undefined local variable" with the USER_ERROR hint; 2.1-2.6: "undefined LOAD_FAST"
    text, info = _recording(release, "undefined-local")
    assert info["exit_code"] != 0
    fatal = _fatal(text, tmp_path)
    assert [d.signature for d in fatal] == ["dynamo-eager-error-hint"]
    d = fatal[0]
    assert d.culprit is not None and d.culprit.line == _marker_line("scenarios/undefined_local.py", "undefined-local")
    assert d.fixes[0].title.startswith("Fix the code at scenarios/undefined_local.py:")
    assert "in eager too" in d.fixes[0].title
    text_of_fixes = " ".join(f"{f.title} {f.detail}" for f in d.fixes).lower()
    assert "torch.compiler.disable" not in text_of_fixes  # it fails in eager too: skipping the function is no fix
    for word in FORBIDDEN[:3]:
        assert word not in text_of_fixes


def test_each_hint_line_is_classified_and_the_eager_check_is_not_advice():
    # 2.13's USER_ERROR hint ends "You can do this by removing the `torch.compile` call, or by using
    # torch.compiler.set_stance("force_eager")": a way to check, never the advice offered as a fix
    text, _info = _recording("t2.13.0", "undefined-local")
    cat = get_catalog([])
    recs = [r for r in extract_records(frame_lines("run.log", text.splitlines())) if r.dynamo is not None and r.dynamo.hints]
    assert recs
    kinds = dynamo_hints(recs[0], cat)
    assert [k for k, _h in kinds] == ["eager-error"]


def test_advice_that_crashlens_never_gives_is_not_offered(tmp_path):
    # the real 2.13 message of str(tensor) with its two advice hints swapped for graph_break_hints.SPARSE_TENSOR's
    # wording (advice to allow graph breaks): offered by nobody, and the general fixes come first again
    text, _info = _recording("t2.13.0", "builtin-on-tensor")
    hints = [ln for ln in text.splitlines() if ln.startswith("  Hint: ") and "report an issue" not in ln]
    assert len(hints) == 2
    swapped = text
    for h in hints:
        swapped = swapped.replace(h, "  Hint: Consider using fullgraph=False to allow graph breaks, or move sparse "
                                     "tensor creation outside the compiled region.")
    fatal = _fatal(swapped, tmp_path)
    assert [d.signature for d in fatal] == ["dynamo-generic"]
    assert not any("dynamo's own hint" in f.title for f in fatal[0].fixes)
    assert not any("fullgraph=False" in f"{f.title} {f.detail}" for f in fatal[0].fixes)
    assert "out of the traced region" in fatal[0].fixes[0].title


@pytest.mark.parametrize("release", ["t2.7.1", "t2.13.0"])
def test_a_structured_break_no_rule_names_is_not_given_the_nearest_wordings_family(release, tmp_path):
    # GB0059 "Failed to trace builtin operator" for `str(tensor)`: the nearest wording is builtin-open's
    # (`open` is GB0059 too), whose fix is to read a file once; the gb_type names a break no family covers.
    # Its hint ("Avoid calling builtin `str` ...") only says not to make the call: the fix that says where to do
    # without it comes first, as on 2.1/2.4 (below), and the hint follows
    text, info = _recording(release, "builtin-on-tensor")
    assert info["exit_code"] != 0
    fatal = _fatal(text, tmp_path)
    assert [d.signature for d in fatal] == ["dynamo-generic"]
    d = fatal[0]
    assert d.near_match is None
    assert d.culprit is not None and d.culprit.line == _marker_line("scenarios/builtin_on_tensor.py", "str-tensor")
    assert "out of the traced region (dynamo rejects `str`" in d.fixes[0].title
    assert "Avoid calling builtin `str` with argument types ['Tensor']" in d.fixes[1].title
    assert not any("file" in f.title.lower().split() for f in d.fixes)


@pytest.mark.parametrize("release", ["t2.1.2", "t2.4.1"])
def test_the_same_builtin_break_worded_as_a_one_liner_still_moves_the_call_out(release, tmp_path):
    # 2.1 `call_function BuiltinVariable(str) [TensorVariable()] {}`, 2.4 `builtin: str [<class ...TensorVariable'>]`
    text, _info = _recording(release, "builtin-on-tensor")
    fatal = _fatal(text, tmp_path)
    assert [d.signature for d in fatal] == ["dynamo-generic"]
    assert "out of the traced region (dynamo rejects `str`" in fatal[0].fixes[0].title


def test_run_fix_leaves_a_break_dynamo_says_fails_in_eager_untouched(tmp_path):
    import sys

    from crashlens.fixplan import Locator, NoPlan, plan_fix

    text, _info = _recording("t2.7.1", "undefined-local")
    (d,) = _fatal(text, tmp_path)
    plan = plan_fix(d, Locator([], sys.path), None)
    assert isinstance(plan, NoPlan) and plan.eager_too
