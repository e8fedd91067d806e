"""The degraded corpus (samples/corpus-degraded): the existing recordings mangled the ways real pastes are
(hard wraps, CRLF, colour escapes and their `^[[` form, CI/journald/kubectl/compose prefixes, notebook
tracebacks, Windows paths, <details> wrappers), built by samples/corpus/degrade.py, scored against its
baseline like the other corpora."""

from __future__ import annotations

import gzip
import importlib.util
import json
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
HERE = ROOT / "samples" / "corpus-degraded"


def _module(name: str):
    spec = importlib.util.spec_from_file_location(f"corpus_{name}", ROOT / "samples" / "corpus" / f"{name}.py")
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


def test_degraded_corpus_holds_its_baseline():
    scorer = _module("score")
    counts = scorer.score(HERE / "cases")
    print("\n" + scorer.table(counts))
    bad = scorer.regressions(counts, json.loads((HERE / "baseline.json").read_text()))
    assert not bad, "figures below samples/corpus-degraded/baseline.json:\n" + "\n".join(bad)


def test_degraded_corpus_is_what_degrade_makes_of_the_recordings(tmp_path):
    """cases/ is exactly what degrade.py writes from the recordings (nothing edited by hand), and it covers
    every kind, on failures and on clean runs."""
    degrade = _module("degrade")
    assert degrade.main(["--out", str(tmp_path)]) == 0
    made = sorted(p.name for p in (tmp_path / "cases").iterdir())
    assert made == sorted(p.name for p in (HERE / "cases").iterdir())
    for name in made:
        a, b = tmp_path / "cases" / name, HERE / "cases" / name
        if name.endswith(".gz"):
            assert gzip.decompress(a.read_bytes()) == gzip.decompress(b.read_bytes()), name
        else:
            assert a.read_bytes() == b.read_bytes(), name
    labels = [json.loads((HERE / "cases" / n).read_text()) for n in made if n.endswith(".json")]
    for kind in degrade.KINDS:
        mine = [lab for lab in labels if lab["fragment"] == kind]
        assert any(lab["is_dynamo_failure"] for lab in mine) and any(not lab["is_dynamo_failure"] for lab in mine), kind
