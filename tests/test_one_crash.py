"""One crash, one report: a run that died of one crash gets one fatal diagnosis, carrying every occurrence
(each rank's copy, each server re-raise, each cut copy), and two different crashes stay two.

The fixtures are recorded-corpus cases (samples/corpus/cases, real torch runs in hand-written framing, see
samples/corpus/README.md), read by path; each one's label says its run died of one uncaught exception chain.
"""

from __future__ import annotations

import gzip
import json
from pathlib import Path

import pytest
from conftest import SAMPLES

from crashlens.cli.scan import run_scan
from crashlens.render.json import document

CASES = SAMPLES / "corpus" / "cases"


def _fatal(log: Path) -> list[dict]:
    doc = document(run_scan((str(log),), (), audit=False, jobs=1))
    return [d for d in doc["diagnoses"] if d["fatal"]]


def _label(case: str) -> dict:
    return json.loads((CASES / f"{case}.json").read_text())


def _assert_one_report(case: str, *, ranks: set[str] = frozenset()) -> dict:
    label = _label(case)
    assert label["outcome"]["exit_code"] and label["outcome"]["exception_chain"], "not a one-crash run"
    fatal = _fatal(CASES / f"{case}.log.gz")
    assert len(fatal) == 1, [(d["signature"], d["exception"]) for d in fatal]
    d = fatal[0]
    want = label.get("culprit")
    if want:
        assert d["culprit"]["file"].endswith(want["file_suffix"]) and d["culprit"]["line"] == want["line"]
    assert ranks <= set(d["ranks"]), d["ranks"]
    return d


# vLLM's EngineCore re-raises a worker's error as `RuntimeError: Worker failed with error '<str(e)>'`; SGLang
# as `Capture cuda graph failed: <str(e)>`. With torch 2.1's InternalTorchDynamoError(str(StopIteration()))
# str(e) begins with an empty line: the quote is empty, and only the dynamo sections it carried (`from user
# code:` down to the culprit) say which crash it is.
@pytest.mark.parametrize("case, reraiser", [
    ("case-0191", "EngineCore_0"),       # vLLM <= 0.9 framing
    ("case-0194", "EngineCore_DP0"),     # vLLM 0.11+ framing
    ("case-0458", "EngineCore_DP0"),     # torch 2.4.1
    ("case-0459", "EngineCore_DP0"),     # ... with the message quoted again, `\n` escaped
    ("case-0462", "EngineCore_DP0"),     # head cut
])
def test_an_empty_message_reraise_is_an_occurrence_of_the_crash_it_reraises(case, reraiser):
    d = _assert_one_report(case, ranks={reraiser})
    assert d["exception"]["type"].startswith("torch._dynamo."), "the dynamo exception is the copy shown"


def test_a_servers_quote_of_a_short_message_with_its_sections_is_that_crash():
    # SGLang prints `Piecewise CUDA Graph failed with error: 96` (str(KeyError(96)) under torch 2.1) and
    # str(e)'s `from user code:` block, then the scheduler's traceback of the same exception.
    d = _assert_one_report("case-0200")
    assert len(d["occurrences"]) == 2


def test_two_different_crashes_each_with_its_reraise_stay_two_reports(tmp_path):
    """Two runs' logs one after the other (two launches into one file): each crash keeps its own re-raise
    and culprit, and neither is folded into the other."""
    both = tmp_path / "two-launches.log"
    both.write_bytes(gzip.decompress((CASES / "case-0191.log.gz").read_bytes())
                     + gzip.decompress((CASES / "case-0131.log.gz").read_bytes()))
    fatal = _fatal(both)
    assert len(fatal) == 2, [(d["signature"], d["exception"]) for d in fatal]
    got = {(Path(d["culprit"]["file"]).name, d["culprit"]["line"]) for d in fatal}
    assert got == {("next_no_default.py", 13), ("backend.py", 14)}
    for d in fatal:
        assert any(r.startswith("EngineCore") for r in d["ranks"]), (d["signature"], d["ranks"])


# SGLang logs `Piecewise CUDA Graph failed with error: <str(e)>` and its advice, then the scheduler's traceback
# of the same exception: here an ImportError, not a dynamo failure. One crash: the ImportError, on each rank.
@pytest.mark.parametrize("case, copies", [
    ("case-0065", 4), ("case-0864", 4),  # torch 2.1, 2.13: each rank's quote and traceback
    ("case-0066", 2),                    # lost newlines: all on line 1, one occurrence per rank
])
def test_a_servers_quote_beside_an_import_error_is_that_import_error(case, copies):
    d = _assert_one_report(case, ranks={"TP0", "TP1"})
    assert d["exception"]["type"] == "ImportError"
    assert len(d["occurrences"]) == copies


def test_an_import_error_and_another_servers_crash_stay_two_reports(tmp_path):
    both = tmp_path / "two-launches.log"
    both.write_bytes(gzip.decompress((CASES / "case-0065.log.gz").read_bytes())
                     + gzip.decompress((CASES / "case-0500.log.gz").read_bytes()))  # an IndexError in capture
    fatal = _fatal(both)
    assert len(fatal) == 2, [(d["signature"], d["exception"]) for d in fatal]
    assert [d["exception"]["message"][:20] for d in fatal] == ["cannot import name '", "index out of range i"]


# torch 2.13 prints `ObservedUserStopIteration` (or `ObservedKeyError`) and "The above exception was the
# direct cause of the following exception:", then the `Unsupported: Observed exception` it led to. Under a
# server's framing the logger prefixes only the second part, so the chain arrives in two pieces.
@pytest.mark.parametrize("case", [
    "case-0989",  # vLLM <= 0.9, two workers
    "case-0990",  # kubectl around vLLM 0.11+, tail cut
    "case-0998",  # docker compose around SGLang, then SGLang's quote and the scheduler's traceback
])
def test_a_chained_cause_printed_apart_is_part_of_the_exception_it_caused(case):
    d = _assert_one_report(case)
    assert d["exception"]["type"] == "torch._dynamo.exc.Unsupported"
    assert d["signature"] in ("next-without-default", "missing-dict-key")


@pytest.mark.parametrize("order", [("case-0989", "case-0811"), ("case-0811", "case-0989")])
def test_a_cause_joins_the_exception_after_it_never_another_crash(tmp_path, order):
    log = tmp_path / "two-launches.log"
    log.write_bytes(b"".join(gzip.decompress((CASES / f"{c}.log.gz").read_bytes()) for c in order))
    fatal = _fatal(log)
    assert len(fatal) == 2, [(d["signature"], d["exception"]) for d in fatal]
    assert {d["signature"] for d in fatal} == {"next-without-default", "builtin-open"}
    stop = next(d for d in fatal if d["signature"] == "next-without-default")
    first = 1 if order[0] == "case-0989" else sum(1 for _ in gzip.open(CASES / "case-0811.log.gz")) + 1
    assert min(o["line"] for o in stop["occurrences"]) == first + 4  # its cause line is one of its own


# The same exception line printed twice, one copy cut: by another rank's lines (8 ranks interleaved), by a
# paste's elision ("..."), by a lost newline that ran it into the next line. The cut copy names a shallower
# frame, or none, and is an occurrence of the full one.
@pytest.mark.parametrize("case", [
    "case-0149",  # pytest, the summary's copy
    "case-0773",  # vLLM 0.11+, markdown elisions
    "case-0856",  # SGLang 8 ranks, markdown
    "case-1050",  # vLLM 0.11+, markdown
    "case-0495",  # quoted inside another error, `\n` escaped
    "case-0906",  # lost newlines
    "case-0102",  # Ray, lost newlines: the copy's message runs on into `from user code:`
    "case-0354",  # SGLang 8 ranks, head cut
    "case-0105",  # not a dynamo failure: an AttributeError on 8 ranks, markdown
])
def test_a_cut_copy_of_the_same_exception_is_an_occurrence_of_the_full_one(case):
    _assert_one_report(case)


def test_the_same_exception_line_at_two_places_stays_two_crashes(tmp_path):
    """torch 2.13 says `TorchRuntimeError: Tensor device mismatch` for the user's own mismatch and for one in a
    library: two runs' logs in one file are two crashes, and the cut copy in the second joins its own."""
    log = tmp_path / "two-launches.log"
    log.write_bytes(gzip.decompress((CASES / "case-0934.log.gz").read_bytes())
                    + gzip.decompress((CASES / "case-0856.log.gz").read_bytes()))
    fatal = _fatal(log)
    assert len(fatal) == 2, [(d["signature"], d["culprit"]) for d in fatal]
    by_place = {(Path(d["culprit"]["file"]).name, d["culprit"]["line"]): d for d in fatal}
    assert set(by_place) == {("fake_device_mismatch.py", 18), ("sampling.py", 64)}
    first = sum(1 for _ in gzip.open(CASES / "case-0934.log.gz"))
    assert [o["line"] for o in by_place[("sampling.py", 64)]["occurrences"]] == [1]
    lines = {o["line"] for o in by_place[("fake_device_mismatch.py", 18)]["occurrences"]}
    assert min(lines) > first and first + 281 in lines  # its own ranks' copies, the cut one (TP1) too


# With 8 ranks printing at once, another rank's prefixed line ends a rank's record: what is left of it is the
# traceback's head, cut inside torch.compile's own frames, with no exception line. Its last user frame is
# only the call into the compiled function; it is a piece of the crash printed beside it.
@pytest.mark.parametrize("case", [
    "case-0128",  # SGLang 8 ranks, torch 2.1
    "case-0255",  # SGLang 8 ranks, head cut
    "case-0312",  # vLLM 0.11+, markdown: cut at dynamo's own `unimplemented` frame
    "case-0492",  # vLLM 0.11+, markdown
])
def test_a_traceback_head_cut_inside_torch_compile_is_a_piece_of_the_crash_beside_it(case):
    _assert_one_report(case)


def test_cut_pieces_join_their_own_crash_in_a_log_of_two(tmp_path):
    log = tmp_path / "two-launches.log"
    log.write_bytes(gzip.decompress((CASES / "case-0128.log.gz").read_bytes())
                    + gzip.decompress((CASES / "case-0255.log.gz").read_bytes()))
    first = sum(1 for _ in gzip.open(CASES / "case-0128.log.gz"))
    fatal = _fatal(log)
    assert len(fatal) == 2, [(d["signature"], d["culprit"]) for d in fatal]
    by_place = {(Path(d["culprit"]["file"]).name, d["culprit"]["line"]): d for d in fatal}
    assert set(by_place) == {("json_call.py", 13), ("torch_cuda_query.py", 9)}
    assert 673 in {o["line"] for o in by_place[("json_call.py", 13)]["occurrences"]}  # TP2's cut head
    assert all(o["line"] > first for o in by_place[("torch_cuda_query.py", 9)]["occurrences"])


def test_a_copy_with_frames_elided_is_an_occurrence_of_the_whole_copy():
    # docker compose around SGLang, pasted as markdown: the server's quote and the traceback both print the
    # `from user code:` frames; the paste elided ("...") a run of them in the second copy. The first copy is in
    # view from its `Explanation: Dynamo ...` line (28), the second from its `from user code:` (75).
    d = _assert_one_report("case-0892")
    assert [o["line"] for o in d["occurrences"]] == [28, 75]
    assert (Path(d["culprit"]["file"]).name, d["culprit"]["line"]) == ("core.py", 179)


def test_an_elided_copy_joins_its_own_traceback_not_another_crash_on_the_same_path(tmp_path):
    """torch 2.13, two launches: one stops at `core.py:58`, the other reaches `core.py:179` through the same
    outer frames. The elided copy of the second is the second's, and the two crashes stay two."""
    log = tmp_path / "two-launches.log"
    log.write_bytes(gzip.decompress((CASES / "case-0887.log.gz").read_bytes())
                    + gzip.decompress((CASES / "case-0892.log.gz").read_bytes()))
    first = sum(1 for _ in gzip.open(CASES / "case-0887.log.gz"))
    fatal = _fatal(log)
    by_place = {(Path(d["culprit"]["file"]).name, d["culprit"]["line"]): d for d in fatal}
    assert len(fatal) == 2 and set(by_place) == {("core.py", 58), ("core.py", 179)}
    assert [o["line"] for o in by_place[("core.py", 179)]["occurrences"]] == [first + 28, first + 75]


def test_the_cause_dynamo_wraps_shown_apart_is_part_of_the_dynamo_crash():
    # torch 2.7's `TorchRuntimeError: Dynamo failed to run FX node with fake tensors: ...: got RuntimeError('a
    # and b must have same reduction dim ...')`, quoted inside another error on two SGLang ranks: the paste
    # shows the RuntimeError apart too, at the same user line. One crash: the dynamo one.
    d = _assert_one_report("case-0597")
    assert d["exception"]["type"] == "torch._dynamo.exc.TorchRuntimeError"



def test_a_custom_backends_error_shown_apart_is_part_of_the_backend_failure():
    # vLLM 0.11+ workers, head cut: one worker's copy starts at the backend's own `AssertionError: ...`, the
    # line after `BackendCompilerFailed: backend=... raised:`.
    d = _assert_one_report("case-0933", ranks={"Worker_TP0", "Worker_TP1"})
    assert d["signature"] == "custom-backend-raised"


FOLDED = ["case-0191", "case-0459", "case-0200", "case-0065", "case-0989", "case-0998", "case-0149", "case-0856",
          "case-0906", "case-0102", "case-0105", "case-0128", "case-0492", "case-0892", "case-0597", "case-0933"]


@pytest.mark.parametrize("log", [CASES / f"{c}.log.gz" for c in FOLDED]
                         + sorted((SAMPLES / "pastes").glob("case-*.log"))
                         + sorted((SAMPLES / "pastes-heldout").glob("case-*.log")), ids=lambda p: p.name)
def test_no_panel_repeats_advice(log):
    """What the copies of a crash brought with them is said once: one "Next in this chain", each fix and
    each note once, in the panel a person reads."""
    from crashlens.render.terminal import panel

    result = run_scan((str(log),), (), audit=False, jobs=1)
    for n, d in enumerate(result.diagnoses, 1):
        text = panel(d, n, 200, False)
        assert text.count("Next in this chain") <= 1, text
        advice = [f.title for f in d.fixes] + [f.detail for f in d.fixes if f.detail] + list(d.warnings)
        assert len(advice) == len(set(advice)), text
