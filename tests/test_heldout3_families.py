"""Mechanisms the third held-out recordings (samples/corpus-heldout3, real torch runs recorded by
samples/corpus/record.py of programs crashlens was not developed on) showed were missing or misrouted; see
samples/corpus-heldout3/misses.md. Each test reads a recorded log by path."""

from __future__ import annotations

from pathlib import Path

import pytest

from conftest import SAMPLES, recorded_fatal, scan_document

RAW = SAMPLES / "corpus-heldout3" / "raw"
CASES = SAMPLES / "corpus-heldout3" / "cases"


def _doc(path: Path) -> list[dict]:
    return scan_document(path)


def _fatal(tmp_path: Path, version: str, name: str) -> dict:
    return recorded_fatal(RAW, tmp_path, version, name)


def _first(d: dict) -> str:
    f = d["fixes"][0]
    return f["title"] + "\n" + f["detail"]


@pytest.mark.parametrize("version", ["2.1.2", "2.4.1", "2.7.1", "2.13.0"])
def test_sorting_by_a_tensor_key_is_fixed_with_a_tensor_sort_not_by_moving_the_call_out(tmp_path, version):
    """sorted(chunks, key=lambda t: t.norm()) under fullgraph=True: each release words it differently (2.1
    `BuiltinVariable(sorted) ... {'key': ...}`, 2.4 `builtin: sorted [ListVariable] True`, 2.7+ `sort with
    non-constant keys`). The traced code needs the order, so "move the call out" cannot work: argsort does."""
    d = _fatal(tmp_path, version, "sorted-by-norm")
    assert d["signature"] == "sort-tensor-keys"
    first = _first(d)
    assert "argsort" in first and "Move the call" not in first
    assert d["culprit"]["file"].endswith("heldout_rec3/sorted_by_norm.py") and d["culprit"]["line"] == 10


@pytest.mark.parametrize("version", ["2.7.1", "2.13.0"])
@pytest.mark.parametrize("name", ["generator-in-forward", "redirect-stdout", "torch-save-bytes"])
def test_a_python_object_constructed_in_forward_is_built_outside_never_made_a_custom_op(tmp_path, name, version):
    """torch 2.7 reports `torch.Generator()`, `io.StringIO()`, `io.BytesIO()` as the skipped builtin
    `X.__new__` (reached through dynamo's instantiate_user_defined_class_object polyfill), in the same words
    as a pybind kernel. A constructor of a non-tensor object cannot be a custom op (the op must return
    tensors): build the object outside the compiled region, as 2.4's wording of the same call already says.
    2.13 words them "An opaque object was created in the middle of the program" (the Generator) and "trace method
    `__new__` of class `type`" with `call_method UserDefinedClassVariable(<class '_io.StringIO'>) __new__`."""
    d = _fatal(tmp_path, version, name)
    assert d["signature"] == "namespace-construction"
    first = d["fixes"][0]
    assert first["kind"] != "custom-op" and "custom op" not in first["title"]
    assert "outside the compiled region" in first["title"] and "__new__" not in first["title"]


@pytest.mark.parametrize("version", ["2.1.2", "2.4.1", "2.7.1", "2.13.0"])
def test_autograd_grad_in_forward_is_taken_outside_not_an_upgrade(tmp_path, version):
    """No torch release traces torch.autograd.grad by default (2.7 words it "intentionally marked ... should
    not be traced", which read as a torch-internal skip: "upgrade torch"). Take the gradient outside the
    compiled function, or with torch.func."""
    d = _fatal(tmp_path, version, "autograd-grad-forward")
    assert d["signature"] == "autograd-grad-traced"
    assert d["fixes"][0]["kind"] != "upgrade"
    assert "outside the compiled region" in d["fixes"][0]["title"]
    assert any("torch.func" in f["title"] for f in d["fixes"][:2])


@pytest.mark.parametrize("version", ["2.1.2", "2.4.1", "2.7.1", "2.13.0"])
def test_an_explicit_graph_break_under_fullgraph_is_removed(tmp_path, version):
    """torch._dynamo.graph_break() left in a fullgraph=True region: 2.1 says `call_function graph_break in
    skip_files .../_dynamo/decorators.py`, 2.4 `skip function graph_break in file ...`, 2.7+ `Call to
    torch._dynamo.graph_break()`. The fix is to remove the call, never a custom op or "move the call"."""
    d = _fatal(tmp_path, version, "explicit-graph-break")
    assert d["signature"] == "explicit-graph-break"
    assert d["fixes"][0]["title"].startswith("Remove the `torch._dynamo.graph_break()` call at ")


def test_a_window_without_the_user_frames_still_gets_the_graph_break_fix():
    """A middle-only window of the 2.1 log (case-0027): no `from user code:`, only dynamo's frames and the
    exception line. The fix must not be a custom op of "the library function called from the compiled region"."""
    (d,) = [d for d in _doc(CASES / "case-0027.log.gz") if d["fatal"]]
    assert d["signature"] == "explicit-graph-break"
    assert d["fixes"][0]["kind"] != "custom-op"


def test_a_graph_break_log_shipped_inside_a_json_record_is_not_a_crash():
    """A fullgraph=False run's graph_breaks log (`V1201 ... [__graph_breaks] Traceback ...`) quoted inside a
    JSON log record's "exc_info" with `\\n` escapes (case-0134, 2.4 redirect-stdout-gb): its first line holds
    the JSON head before the glog prefix; the graph_breaks artifact still makes every copy a logged break."""
    diags = [d for d in _doc(CASES / "case-0134.log.gz") if d["family"] == "dynamo"]
    assert diags and not any(d["fatal"] for d in diags)


def test_dynamos_hint_about_a_call_below_the_users_line_comes_after_the_fix_at_that_line(tmp_path):
    """torch 2.7.1, `re.match` on a config string in forward: dynamo rejects `frozenset.__contains__` inside the
    re module and hints "Avoid calling `frozenset.__contains__` in your code", which the user never wrote. The
    fix at the user's line (do the match outside the traced region) comes first; the hint stays, after it."""
    d = _fatal(tmp_path, "2.7.1", "regex-config")
    titles = [f["title"] for f in d["fixes"]]
    assert titles[0].startswith("Move the call at heldout_rec3/regex_config.py:")
    assert any("frozenset.__contains__" in t and "hint" in t for t in titles[1:])
