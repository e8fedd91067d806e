"""The labelled dev corpus (real crash logs from public bug reports), read from ../shared when present."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from conftest import CORPUS
from crashlens.cli.scan import run_scan
from crashlens.render.json import document

CASES = sorted(CORPUS.glob("case-*.json")) if CORPUS.is_dir() else []
pytestmark = pytest.mark.skipif(not CASES, reason="../shared/corpus/dev is not present")


def _scan(label_path: Path) -> tuple[dict, list[dict]]:
    label = json.loads(label_path.read_text())
    doc = document(run_scan((str(label_path.with_suffix(".log")),), (), audit=False))
    return label, [d for d in doc["diagnoses"] if d["family"] == "dynamo"]


def _frame_ok(found: dict | None, want: dict) -> bool:
    return bool(found) and str(found["file"]).endswith(want["file_suffix"]) and found["line"] == want["line"]


@pytest.mark.parametrize("label_path", CASES, ids=[p.stem for p in CASES])
def test_detection_and_no_false_alarm(label_path):
    label, diags = _scan(label_path)
    if label.get("is_dynamo_failure"):
        assert diags, "a dynamo failure went undetected"
    elif label.get("dynamo_warnings_ok"):
        assert not [d for d in diags if d["fatal"]], "a warning-only log was reported as a fatal dynamo crash"
    else:
        assert not diags, f"false alarm: {[d['title'] for d in diags]}"


def _keywords_hit(fixes: list[dict], keywords: list[str]) -> bool:
    text = " ".join((f.get("title") or "") + " " + (f.get("detail") or "") for f in fixes).lower()
    return any(k.lower() in text for k in keywords)


def test_culprit_and_first_fix_rates():
    culprit_cases = culprit_ok = fix_cases = fix_ok = 0
    for label_path in CASES:
        label, diags = _scan(label_path)
        if not label.get("is_dynamo_failure"):
            continue
        want = label.get("culprit")
        if want and want.get("file_suffix") and want.get("line"):
            culprit_cases += 1
            culprit_ok += bool(diags) and _frame_ok(diags[0]["culprit"], want)
        if label.get("accepted_fix_keywords"):
            fix_cases += 1
            fix_ok += bool(diags) and _keywords_hit(diags[0]["fixes"][:1], label["accepted_fix_keywords"])
    assert culprit_cases and culprit_ok / culprit_cases >= 0.9, (culprit_ok, culprit_cases)
    assert fix_cases and fix_ok / fix_cases >= 0.8, (fix_ok, fix_cases)
