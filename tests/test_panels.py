"""No panel repeats advice: every case of every corpus (the recorded corpora, the real pastes, the dev corpus,
the samples) rendered as a person reads it, and each panel checked for a section heading, a fix or a note
said twice. A crash folded from many copies (ranks, re-raises, cut pieces) brings each copy's advice with
it; the panel says each thing once."""

from __future__ import annotations

import io
import re
from pathlib import Path

import pytest
from conftest import CORPUS, SAMPLES

from crashlens.cli.scan import run_scan
from crashlens.records import Diagnosis
from crashlens.render.terminal import render

FOLDERS = [SAMPLES / "corpus" / "cases", SAMPLES / "corpus-heldout" / "cases", SAMPLES / "pastes",
           SAMPLES / "pastes-heldout", SAMPLES / "pastes-heldout2", SAMPLES / "pastes-heldout3", SAMPLES, CORPUS]
# a grid row's label at the start of a panel line: "│ Culprit  fakeinfer/jit/cpp_ext.py:37 in ..."
ROW = re.compile(r"^│ (Error|Reason|Culprit|Callee|Call|Chain|Context|Log|Match)  ")
HEADINGS = ("Fixes, best first:", "Next in this chain")
ITEM = re.compile(r"^│ (\d+)\. \[")  # a fix's first line: "│ 1. [custom-op] Make ..."


def repeats(panel: str, d: Diagnosis) -> list[str]:
    """What one rendered panel says more than once (empty when nothing is)."""
    lines = panel.splitlines()
    found = []
    rows = [m.group(1) for m in map(ROW.match, lines) if m]
    found += [f"row {r!r} x{rows.count(r)}" for r in dict.fromkeys(rows) if rows.count(r) > 1]
    found += [f"heading {h!r} x{panel.count(h)}" for h in HEADINGS if panel.count(h) > 1]
    numbers = [m.group(1) for m in map(ITEM.match, lines) if m]
    if len(numbers) != len(set(numbers)):
        found.append(f"fix numbers {numbers}")
    said = [f.title for f in d.fixes] + [f.detail for f in d.fixes if f.detail] + list(d.warnings)
    found += [f"said twice: {s[:80]!r}" for s in dict.fromkeys(said) if said.count(s) > 1]
    return found


def _logs(folder: Path) -> list[Path]:
    return sorted(p for p in folder.glob("*.log*") if p.name.endswith((".log", ".log.gz")))


def test_repeats_finds_a_repeated_heading_and_fix():
    log = SAMPLES / "sglang-8rank-pcg-fp4.log"
    result = run_scan((str(log),), (), audit=False, jobs=1)
    (d,) = result.diagnoses
    buf = io.StringIO()
    render(result, buf, color=False, width=160)
    panel = buf.getvalue()
    assert not repeats(panel, d)
    twice = panel.replace("│ Log  ", "│ Log  x\n│ Log  ", 1).replace("Fixes, best first:", "Fixes, best first: Fixes, best first:", 1)
    assert len(repeats(twice, d)) == 2
    from crashlens._struct import replace

    assert repeats(panel, replace(d, warnings=d.warnings + d.warnings[:1]))


@pytest.mark.parametrize("folder", [f for f in FOLDERS if f.is_dir()], ids=lambda f: f"{f.parent.name}/{f.name}")
def test_no_panel_of_any_corpus_case_repeats_advice(folder):
    logs = _logs(folder)
    assert logs, folder
    bad = []
    for log in logs:
        result = run_scan((str(log),), (), audit=False, jobs=1)
        buf = io.StringIO()
        render(result, buf, color=False, width=160)
        panels = ["╭" + p for p in buf.getvalue().split("╭")[1:]]
        assert len(panels) == len(result.diagnoses), log.name
        for n, (panel, d) in enumerate(zip(panels, result.diagnoses), 1):
            bad += [f"{log.name} panel {n}: {r}" for r in repeats(panel, d)]
    assert not bad, "\n".join(bad[:20])
