"""The labelled corpora: the dev corpus (real crash logs from public bug reports, read from ../shared when
present) and the recorded corpus in samples/corpus (real torch runs, framed and degraded like pastes)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from conftest import CORPUS
from crashlens.cli.scan import run_scan
from crashlens.render.json import document

CASES = sorted(CORPUS.glob("case-*.json")) if CORPUS.is_dir() else []
needs_dev = pytest.mark.skipif(not CASES, reason="../shared/corpus/dev is not present")


def _scan(label_path: Path) -> tuple[dict, list[dict]]:
    label = json.loads(label_path.read_text())
    doc = document(run_scan((str(label_path.with_suffix(".log")),), (), audit=False))
    return label, [d for d in doc["diagnoses"] if d["family"] == "dynamo"]


def _frame_ok(found: dict | None, want: dict) -> bool:
    return bool(found) and str(found["file"]).endswith(want["file_suffix"]) and found["line"] == want["line"]


@needs_dev
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


@needs_dev
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


# ---------------------------------------------------------------------------------------------------------
# The recorded corpus (samples/corpus): real torch runs of the reproducers under several torch releases,
# framed and degraded like bug-report pastes, scored in-process against the committed baseline figures.

def _corpus_module(name: str):
    import importlib.util

    from conftest import SAMPLES

    spec = importlib.util.spec_from_file_location(f"corpus_{name}", SAMPLES / "corpus" / f"{name}.py")
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


def test_recorded_corpus_holds_the_baseline():
    scorer = _corpus_module("score")
    counts = scorer.score()
    print("\n" + scorer.table(counts))
    baseline = json.loads(scorer.BASELINE.read_text())
    bad = scorer.regressions(counts, baseline)
    assert not bad, "figures below samples/corpus/baseline.json:\n" + "\n".join(bad)


def test_one_crash_one_report_is_a_baseline_figure_that_may_only_go_down():
    """Of the runs that died of one crash, how many got more than one fatal report is in every baseline, and
    a rise in it is a regression like a drop in detection (test_*_holds_the_baseline enforce it)."""
    scorer = _corpus_module("score")
    root = Path(__file__).resolve().parents[1] / "samples"
    for base in (scorer.BASELINE, root / "pastes" / "baseline.json", root / "pastes-heldout" / "baseline.json"):
        figures = json.loads(base.read_text())["all"]
        assert figures["one_crash"] > 0 and 0 <= figures["multi_fatal"] <= figures["one_crash"], base
    base = {"all": {"pos": 1, "detect": 1, "culprit_cases": 0, "culprit": 0, "fix_cases": 0, "fix1": 0, "neg": 0,
                    "false_alarm": 0, "one_crash": 10, "multi_fatal": 2}}
    assert not scorer.regressions({"all": dict(base["all"], multi_fatal=1)}, base)
    assert scorer.regressions({"all": dict(base["all"], multi_fatal=3)}, base)
    # the count of crashes comes from the label (the run's own outcome), never from crashlens's output
    assert scorer.holds_one_crash({"outcome": {"exit_code": 1, "exception_chain": ["builtins.ImportError"]}})
    assert not scorer.holds_one_crash({"is_dynamo_failure": False, "outcome": {"exit_code": 0,
                                                                               "exception_chain": []}})
    one = {"is_dynamo_failure": True, "outcome": {"exit_code": 1, "exception_chain": ["torch._dynamo.exc.Unsupported"]}}
    assert scorer.judge(one, [], fatal_reports=2)["multi_fatal"] == 1
    assert scorer.judge(one, [], fatal_reports=1)["multi_fatal"] == 0


def test_recorded_corpus_covers_releases_framings_and_fragments():
    labels = [json.loads(p.read_text()) for p in sorted((_corpus_module("score").CASES).glob("case-*.json"))]
    assert len(labels) >= 300
    releases = {lab["torch_version"].split("+")[0].rsplit(".", 1)[0] for lab in labels}
    assert len(releases) >= 4, releases
    framings = {lab["framing"] for lab in labels}
    assert {"sglang-1", "sglang-2", "sglang-8", "vllm-old", "vllm-new", "ray", "docker", "kubectl", "mpi",
            "pytest", "plain"} <= framings
    assert {lab["fragment"] for lab in labels} >= {"full", "head-cut", "tail-cut", "window", "oneline",
                                                    "markdown", "quoted"}
    pos = [lab for lab in labels if lab["is_dynamo_failure"]]
    assert pos and len(pos) < len(labels), "the corpus needs failures and clean runs"
    assert {lab["culprit_in"] for lab in pos} == {"user", "library"}
    assert {lab["fullgraph"] for lab in pos} == {True, False}
    for lab in pos:
        # a fix that cannot work there is never an accepted answer
        if lab["fullgraph"]:
            assert not any("disable" in k for k in lab["accepted_fix_keywords"]), lab["repro"]
        if lab["culprit"]:
            assert lab["evidence"]["culprit_frame"], lab["repro"]


def test_recorded_corpus_is_what_build_makes_of_the_recordings(tmp_path):
    """cases/ is exactly what build.py writes from raw/ (nothing edited by hand)."""
    build = _corpus_module("build")
    assert build.main(["--out", str(tmp_path)]) == 0
    here = _corpus_module("score").CASES
    made = sorted(p.name for p in (tmp_path / "cases").iterdir())
    assert made == sorted(p.name for p in here.iterdir())
    import gzip

    def text(p: Path) -> bytes:  # compare contents: another zlib may compress the same text differently
        return gzip.decompress(p.read_bytes()) if p.suffix == ".gz" else p.read_bytes()

    for name in made:
        assert text(tmp_path / "cases" / name) == text(here / name), name


@pytest.mark.parametrize("set_name", ["pastes", "pastes-heldout", "pastes-heldout2", "pastes-heldout3",
                                      "pastes-heldout4", "pastes-heldout5", "pastes-heldout6",
                                      "pastes-heldout7", "pastes-heldout8"])
def test_real_pastes_hold_the_baseline(set_name):
    """samples/pastes, pastes-heldout ... pastes-heldout8: real bug-report fragments (verbatim,
    with their source URLs), scored like the corpus; the suite fails when a figure drops below the set's baseline.json."""
    scorer = _corpus_module("score")
    folder = Path(__file__).resolve().parents[1] / "samples" / set_name
    counts = scorer.score(folder)
    print("\n" + scorer.table(counts))
    baseline = json.loads((folder / "baseline.json").read_text())
    bad = scorer.regressions(counts, baseline)
    assert not bad, f"figures below samples/{set_name}/baseline.json:\n" + "\n".join(bad)


# ---------------------------------------------------------------------------------------------------------
# The held-out recorded corpus (samples/corpus-heldout): programs written apart from the main corpus's
# reproducers (samples/repro/heldout_rec), recorded and built by the same scripts with their own plan.

def _heldout() -> Path:
    return Path(__file__).resolve().parents[1] / "samples" / "corpus-heldout"


@pytest.mark.parametrize("set_name", ["corpus-heldout", "corpus-heldout2", "corpus-heldout3", "corpus-heldout4"])
def test_heldout_recordings_hold_their_baseline(set_name):
    scorer = _corpus_module("score")
    here = _heldout().parent / set_name
    counts = scorer.score(here / "cases")
    print("\n" + scorer.table(counts))
    bad = scorer.regressions(counts, json.loads((here / "baseline.json").read_text()))
    assert not bad, f"figures below samples/{set_name}/baseline.json:\n" + "\n".join(bad)


@pytest.mark.parametrize("set_name", ["corpus-heldout", "corpus-heldout2", "corpus-heldout3", "corpus-heldout4"])
def test_heldout_recordings_are_what_build_makes_of_them(tmp_path, set_name):
    """samples/<set>/cases/ is exactly what build.py writes from its raw/ with its plan."""
    import gzip

    build = _corpus_module("build")
    here = _heldout().parent / set_name
    assert build.main(["--raw-dir", str(here / "raw"), "--plan", str(here / "plan.py"), "--out", str(tmp_path)]) == 0
    made = sorted(p.name for p in (tmp_path / "cases").iterdir())
    assert made == sorted(p.name for p in (here / "cases").iterdir())
    labels = [json.loads((here / "cases" / n).read_text()) for n in made if n.endswith(".json")]
    assert len({lab["torch_version"].rsplit(".", 1)[0] for lab in labels}) >= 4
    assert {lab["culprit_in"] for lab in labels if lab["is_dynamo_failure"]} == {"user", "library"}
    assert any(not lab["is_dynamo_failure"] for lab in labels)
    for name in made:
        a, b = tmp_path / "cases" / name, here / "cases" / name
        if name.endswith(".gz"):
            assert gzip.decompress(a.read_bytes()) == gzip.decompress(b.read_bytes()), name
        else:
            assert a.read_bytes() == b.read_bytes(), name
