"""Which fix comes first, given what the log says (issue 13 §4): a custom backend that raised gets "your backend
raised X at FILE:LINE" first, never an opaque op of the backend, whichever package holds it; code that raises in
eager too says so in the server's wording of the fix as well as in plain torch.compile's.

Fixtures: recorded cases read by path (real torch runs in hand-written framing; corpus-degraded manglings by
samples/corpus/degrade.py).
"""

from __future__ import annotations

import json

import pytest
from conftest import SAMPLES

from crashlens.cli.scan import run_scan
from crashlens.render.json import document


def _top(corpus: str, case: str) -> tuple[dict, dict]:
    base = SAMPLES / corpus / "cases" / case
    label = json.loads(base.with_suffix(".json").read_text())
    doc = document(run_scan((str(base.with_suffix(".log.gz")),), (), audit=False, jobs=1))
    dyn = [d for d in doc["diagnoses"] if d["family"] == "dynamo"]
    assert dyn, "not detected"
    return label, dyn[0]


def _text(f: dict) -> str:
    return " ".join(str(f.get(k) or "") for k in ("title", "detail")).lower()


def test_a_backend_in_another_package_than_its_caller_gets_its_own_fix_first_and_no_opaque_op():
    # SGLang TP=8 framing with `details` blocks; the backend's `__call__` (scenarios/backend_failed.py) is in
    # another package than the frame that called torch.compile (run_scenario.py)
    label, d = _top("corpus-degraded", "case-0268")
    assert d["signature"] == "custom-backend-raised"
    first = d["fixes"][0]
    assert "backend" in first["title"].lower() and not first["title"].startswith("Library patch"), first["title"]
    assert any(k.lower() in _text(first) for k in label["accepted_fix_keywords"]), first["title"]
    assert not [f["title"] for f in d["fixes"] if f["kind"] == "custom-op"], "a backend is called, never traced"


@pytest.mark.parametrize("corpus, case", [
    ("corpus-heldout", "case-0182"),    # SGLang TP=8, torch 2.4.1
    ("corpus-degraded", "case-0416"),   # vLLM (new prefix) under journald, torch 2.4.1
])
def test_the_servers_wording_of_an_observed_exception_says_it_raises_in_eager_too(corpus, case):
    label, d = _top(corpus, case)
    assert d["context"]["server"] in ("sglang", "vllm")
    first = d["fixes"][0]
    assert "eager too" in _text(first), first
    assert any(k.lower() in _text(first) for k in label["accepted_fix_keywords"]), first["title"]
