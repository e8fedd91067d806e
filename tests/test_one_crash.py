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


# ---------------------------------------------------------------------------------------------------------
# Copies that name no place where dynamo failed. Each fold below has its "two different crashes stay two".

HELDOUT = SAMPLES / "corpus-heldout" / "cases"


def _one_report(folder: Path, case: str) -> dict:
    label = json.loads((folder / f"{case}.json").read_text())
    fatal = _fatal(folder / f"{case}.log.gz")
    assert len(fatal) == 1, [(d["signature"], d["exception"], d["culprit"]) for d in fatal]
    want = label.get("culprit")
    if want:
        got = fatal[0]["culprit"]
        assert got["file"].endswith(want["file_suffix"]) and got["line"] == want["line"], got
    return fatal[0]


def _two_launches(tmp_path: Path, *logs: Path) -> tuple[list[dict], int]:
    """The logs one after the other in one file; the fatal reports, and the last line of the first log."""
    both = tmp_path / "two-launches.log"
    texts = [gzip.decompress(p.read_bytes()) if p.suffix == ".gz" else p.read_bytes() for p in logs]
    both.write_bytes(b"".join(t if t.endswith(b"\n") else t + b"\n" for t in texts))
    return _fatal(both), texts[0].rstrip(b"\n").count(b"\n") + 1


# An 8-rank copy that lost its `from user code:` block (another rank's lines, an elision) names the program's
# call into the compiled function as its culprit (`compiled(*args)`, then eval_frame / convert_frame): that says
# nothing of where dynamo failed, so the exception line decides, and the copy is the fuller copy's.
@pytest.mark.parametrize("folder, case", [
    (CASES, "case-0015"),    # SGLang 8 ranks, markdown, torch 2.1: TP7's copy at `_harness.py:14`
    (HELDOUT, "case-0215"),  # Ray, torch 2.7: ConstraintViolationError, whose full copy names no culprit either
])
def test_a_copy_naming_only_the_call_into_the_compiled_function_is_the_crash(folder, case):
    d = _one_report(folder, case)
    if case == "case-0015":
        assert 577 in [o["line"] for o in d["occurrences"]]  # TP7's copy
        assert "builtin_open" not in d["fixes"][0]["title"] or "main" not in d["fixes"][0]["title"], \
            "the fixes are the full copy's, not ones written for the call site"


def test_copies_naming_only_the_call_into_compiled_code_join_their_own_crash(tmp_path):
    """Two launches, each with 8-rank copies that name only the call into the compiled function: two
    crashes (their exception lines differ), each copy with its own."""
    fatal, first = _two_launches(tmp_path, CASES / "case-0015.log.gz", CASES / "case-0353.log.gz")
    assert len(fatal) == 2, [(d["signature"], d["culprit"]) for d in fatal]
    by_sig = {d["signature"]: d for d in fatal}
    assert set(by_sig) == {"skipped-function", "os-environ-read"}
    assert all(o["line"] <= first for o in by_sig["skipped-function"]["occurrences"])
    assert 577 in {o["line"] for o in by_sig["skipped-function"]["occurrences"]}
    assert all(o["line"] > first for o in by_sig["os-environ-read"]["occurrences"])
    assert first + 669 in {o["line"] for o in by_sig["os-environ-read"]["occurrences"]}  # TP0's entry-only copy


def test_a_copy_whose_culprit_another_copy_of_the_crash_shows_is_that_crash():
    # SGLang 8 ranks, torch 2.4: TP6's full copy lost the first frame of its `from user code:` block
    # (fp4_rounds.py:99, the compiled function); TP4's and TP5's copies kept only that frame. The unranked
    # copy shows both it and the full copy's culprit: they are frames of one crash.
    d = _one_report(CASES, "case-0353")
    assert {1331, 290} <= {o["line"] for o in d["occurrences"]}
    assert d["signature"] == "os-environ-read"


# A traceback head whose exception line a paste elided, then dynamo's trailer: its only frames are the
# script's `<module>` line, or a server's own dispatch frames (vLLM's EngineCore). Where the paste was cut,
# not where dynamo failed: a piece of the crash printed beside it.
@pytest.mark.parametrize("folder, case", [
    (CASES, "case-0684"),    # vLLM 0.11+, markdown: `run_scenario.py:19 in <module>` alone
    (HELDOUT, "case-0141"),  # vLLM 0.11+, markdown: the EngineCore's `collective_rpc` frames
])
def test_a_traceback_head_cut_before_its_exception_is_a_piece_of_the_crash_beside_it(folder, case):
    _one_report(folder, case)


def test_a_cut_traceback_head_joins_its_own_crash_in_a_log_of_two(tmp_path):
    fatal, first = _two_launches(tmp_path, CASES / "case-0684.log.gz", CASES / "case-0015.log.gz")
    assert len(fatal) == 2, [(d["signature"], d["culprit"]) for d in fatal]
    item = next(d for d in fatal if d["signature"] == "item-scalar")
    assert 30 in {o["line"] for o in item["occurrences"]}  # the `<module>` head, Worker_TP1's
    assert all(o["line"] <= first for o in item["occurrences"])


def test_pieces_that_all_lost_their_exception_line_are_one_crash():
    # vLLM 0.11+, markdown, torch 2.1: the paste elided every exception line. Left: two workers' traceback
    # heads (one cut inside torch.compile, one naming the call into it) and the EngineCore's quote of
    # `from user code:`, which says where dynamo failed. One crash, at that place.
    d = _one_report(HELDOUT, "case-0033")
    assert {o["rank"] for o in d["occurrences"]} >= {"Worker_TP0", "Worker_TP1", "EngineCore_DP0"}


def test_pieces_without_exception_lines_join_their_own_crash_in_a_log_of_two(tmp_path):
    fatal, first = _two_launches(tmp_path, HELDOUT / "case-0033.log.gz", CASES / "case-0684.log.gz")
    assert len(fatal) == 2, [(d["signature"], d["culprit"]) for d in fatal]
    places = {(Path(d["culprit"]["file"]).name, d["culprit"]["line"]): d for d in fatal}
    assert set(places) == {("fstring_debug.py", 10), ("sampling.py", 41)}
    assert all(o["line"] <= first for o in places[("fstring_debug.py", 10)]["occurrences"])
    assert all(o["line"] > first for o in places[("sampling.py", 41)]["occurrences"])


def test_two_copies_alike_but_for_the_signature_their_text_matched_are_one_crash():
    # SGLang 8 ranks, torch 2.1: every copy prints the same exception line and `from user code:` frame; some
    # ranks' records also caught the `[ERROR] Tensor.item` log line beside them and matched a surer signature.
    d = _one_report(HELDOUT, "case-0038")
    assert d["signature"] == "autograd-function-item"  # `.item()` inside a custom autograd.Function
    assert len(d["ranks"]) == 8


def test_two_crashes_at_different_places_with_the_same_finding_stay_two(tmp_path):
    fatal, first = _two_launches(tmp_path, HELDOUT / "case-0038.log.gz", CASES / "case-0684.log.gz")
    assert len(fatal) == 2, [(d["signature"], d["culprit"]) for d in fatal]
    places = {(Path(d["culprit"]["file"]).name, d["culprit"]["line"]) for d in fatal}
    assert places == {("function_item.py", 21), ("sampling.py", 41)}


# vLLM's `RuntimeError: Worker failed with error 'Constraints violated!` quotes a crash whose frames are all
# torch's (ConstraintViolationError, raised while building guards): it has no culprit, but it is a complete
# traceback, and the quote is that crash.
def test_a_reraise_of_a_crash_that_names_no_culprit_is_that_crash():
    d = _one_report(HELDOUT, "case-0030")  # kubectl around vLLM 0.11+, newlines lost
    assert d["exception"]["type"].endswith("ConstraintViolationError")
    assert "EngineCore_DP0" in d["ranks"]


def test_a_reraise_of_a_crash_without_a_culprit_never_joins_another_crash(tmp_path):
    fatal, first = _two_launches(tmp_path, HELDOUT / "case-0030.log.gz", CASES / "case-0191.log.gz")
    assert len(fatal) == 2, [(d["signature"], d["exception"]) for d in fatal]
    for d in fatal:
        assert any(r.startswith("EngineCore") for r in d["ranks"]), (d["signature"], d["ranks"])


# torch logs `Error while creating guard:` and then the traceback of what the guard raised; a paste's elision
# cut the line from its traceback. It is the crash printed next after it.
def test_a_logged_error_line_cut_from_its_traceback_is_the_crash_after_it():
    d = _one_report(HELDOUT, "case-0123")  # SGLang 8 ranks, markdown, torch 2.4
    assert d["signature"] == "dynamic-dim-specialized"
    assert 78 in {o["line"] for o in d["occurrences"]}


def test_a_logged_error_line_joins_the_crash_after_it_never_the_one_before(tmp_path):
    fatal, first = _two_launches(tmp_path, CASES / "case-0684.log.gz", HELDOUT / "case-0123.log.gz")
    assert len(fatal) == 2, [(d["signature"], d["exception"]) for d in fatal]
    guard = next(d for d in fatal if d["signature"] == "dynamic-dim-specialized")
    assert first + 78 in {o["line"] for o in guard["occurrences"]}
    assert all(o["line"] > first for o in guard["occurrences"])


# pytest's short summary (`FAILED path::test - Type: first line`) in a paste that lost its newlines runs on
# into the session footer (`==== 1 failed, 2 passed in 21.07s ====`): it is still the crash's summary line.
def test_a_summary_line_run_on_into_the_session_footer_is_the_crash():
    _one_report(CASES, "case-0327")


def test_two_pytest_runs_that_lost_their_newlines_are_two_crashes(tmp_path):
    fatal, first = _two_launches(tmp_path, CASES / "case-0327.log.gz", CASES / "case-0138.log.gz")
    assert len(fatal) == 2, [(d["signature"], d["exception"]) for d in fatal]
    # each run is one physical line: its crash and its summary line are both on it
    assert sorted(sorted({o["line"] for o in d["occurrences"]}) for d in fatal) == [[1], [2]]


# A real paste (samples/pastes-heldout3, vLLM issue 19445): the server's `RuntimeError: CUDA out of memory
# occurred when warming up sampler ...` and the `torch.OutOfMemoryError` it was raised from, each a bare
# exception line, the "direct cause" line between them cut. One crash.
def test_an_exception_and_the_one_it_was_raised_from_printed_bare_are_one_crash():
    fatal = _fatal(SAMPLES / "pastes-heldout3" / "case-041.log")
    assert len(fatal) == 1, [(d["signature"], d["exception"]) for d in fatal]
    assert [o["line"] for o in fatal[0]["occurrences"]] == [1, 4]


@pytest.mark.parametrize("second", ["case-005.log", "case-006.log"])
def test_bare_exception_lines_of_different_findings_stay_two(tmp_path, second):
    # another paste's bare TypeError a few lines after the OOM pair: another crash
    fatal, first = _two_launches(tmp_path, SAMPLES / "pastes-heldout3" / "case-041.log",
                                 SAMPLES / "pastes-heldout" / second)
    assert len(fatal) == 2, [(d["signature"], d["exception"]) for d in fatal]
    oom = next(d for d in fatal if d["signature"] == "cuda-oom")
    assert [o["line"] for o in oom["occurrences"]] == [1, 4]


# ---------------------------------------------------------------------------------------------------------
# A folded crash carries every occurrence and rank, in log order.

@pytest.mark.parametrize("log", [SAMPLES / "sglang-8rank-pcg-fp4.log", CASES / "case-0015.log.gz",
                                 CASES / "case-0353.log.gz", HELDOUT / "case-0038.log.gz"], ids=lambda p: p.name)
def test_a_folded_8_rank_crash_carries_every_occurrence_in_log_order(log):
    fatal = _fatal(log)
    assert len(fatal) == 1
    occ = fatal[0]["occurrences"]
    lines = [o["line"] for o in occ]
    assert lines == sorted(lines) and len(set(lines)) == len(lines)
    ranks = {o["rank"] for o in occ if o["rank"]}
    assert len(ranks) >= 7, ranks  # a markdown paste may have elided a rank's every copy
    assert fatal[0]["ranks"] == sorted(ranks, key=lambda r: int(r[2:]))


def test_the_8_rank_sample_reports_each_ranks_quote_and_traceback():
    """SGLang prints `Piecewise CUDA Graph failed with error: ...` and then `Scheduler hit an exception:
    Traceback ...` on every rank: each of those 16 record starts is an occurrence of the one crash."""
    log = SAMPLES / "sglang-8rank-pcg-fp4.log"
    starts = [n for n, line in enumerate(log.read_bytes().split(b"\n"), 1)  # `\r` progress bars stay in their line
              if b"Piecewise CUDA Graph failed with error" in line or b"Scheduler hit an exception" in line]
    assert len(starts) == 16
    (d,) = _fatal(log)
    ranked = [o["line"] for o in d["occurrences"] if o["rank"]]
    assert ranked == starts


# ---------------------------------------------------------------------------------------------------------
# Re-dealt recordings: a recording of samples/corpus/raw framed and degraded by the corpus's own framing.py and
# fragment.py with another seed than build.py's (the same real torch output, another paste of it).

def _redeal(tmp_path: Path, torch_v: str, name: str, framing_name: str, kind: str, seed: int) -> Path:
    import importlib.util
    import random

    spec = importlib.util.spec_from_file_location("corpus_build", SAMPLES / "corpus" / "build.py")
    build = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(build)
    text = gzip.decompress((SAMPLES / "corpus" / "raw" / f"t{torch_v}" / f"{name}.log.gz").read_bytes()).decode(
        "utf-8", "replace")
    text = text.split("\n", 1)[1] if text.startswith(build.HEADER) else text
    lines = text.rstrip("\n").split("\n")
    rng = random.Random(seed)
    framed = build.framing.frame(framing_name, lines, rng, build.BY_NAME[name].fullgraph)
    out = tmp_path / f"{name}-{framing_name}-{kind}-{seed}.log"
    out.write_text(build.fragment.make(kind, framed, rng), encoding="utf-8")
    return out


# Ray actors' output pasted as markdown, torch 2.1: every exception line elided, and no copy kept its `from
# user code:` block either. Two traceback heads of one program's call are left: one crash.
@pytest.mark.parametrize("seed", [0, 1])
def test_traceback_heads_that_kept_nothing_else_are_one_crash(tmp_path, seed):
    fatal = _fatal(_redeal(tmp_path, "2.1.2", "fp4-round-5", "ray", "markdown", seed))
    assert len(fatal) == 1, [(d["signature"], d["culprit"], d["occurrences"]) for d in fatal]
    assert len(fatal[0]["occurrences"]) == 2


# torch 2.13, SGLang 1 rank, a window of the log: `ObservedUserStopIteration` and "The above exception was the
# direct cause ...", then the `Observed exception` it led to, whose type the window's cut took.
@pytest.mark.parametrize("seed", [0, 1, 2, 6])
def test_a_cause_and_the_untyped_exception_it_led_to_are_one_crash(tmp_path, seed):
    fatal = _fatal(_redeal(tmp_path, "2.13.0", "next-no-default", "sglang-1", "window", seed))
    assert len(fatal) == 1, [(d["signature"], d["exception"]) for d in fatal]


def _redealt_as_build_would(tmp_path: Path, torch_v: str, name: str, seed: int, framing_name: str, kind: str,
                            corpus: str = "corpus") -> Path:
    """build.py's own recipe with another seed: the framing and degradation drawn from the recording's rng
    (`seed torch name`), from `corpus`'s recordings and plan. Skips when today's framing/fragment lists draw
    another pair for it."""
    import importlib.util
    import random
    import zlib

    spec = importlib.util.spec_from_file_location("corpus_build", SAMPLES / "corpus" / "build.py")
    build = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(build)
    raw = SAMPLES / corpus / "raw" / f"t{torch_v}"
    index = json.loads((raw / "index.json").read_text())
    text = gzip.decompress((raw / f"{name}.log.gz").read_bytes())
    text = text.decode("utf-8", "replace")
    text = text.split("\n", 1)[1] if text.startswith(build.HEADER) else text
    rng = random.Random(zlib.crc32(f"{seed} {index['torch']} {name}".encode()))
    drawn = (rng.choice(build.FRAMED), rng.choice(build.fragment.KINDS))
    if drawn != (framing_name, kind):
        pytest.skip(f"the re-deal now draws {drawn}")
    plan = {r.name: r for r in build.load_plan(str(SAMPLES / corpus / "plan.py") if corpus != "corpus" else None)}
    framed = build.framing.frame(framing_name, text.rstrip("\n").split("\n"), rng, plan[name].fullgraph)
    out = tmp_path / f"{name}-{framing_name}-{kind}.log"
    out.write_text(build.fragment.make(kind, framed, rng), encoding="utf-8")
    return out


# SGLang 8 ranks, a window of the log, torch 2.7: one rank's copy of `Failed to trace builtin operator` lost its
# type with SGLang's `Capture cuda graph failed: ` head, and matched the server's wrapper from its frames. Its
# whole message is the dynamo copy's: one crash.
def test_a_copy_that_lost_its_type_with_its_head_is_the_crash_whose_message_it_is(tmp_path):
    fatal = _fatal(_redealt_as_build_would(tmp_path, "2.7.1", "module-setattr", 1, "sglang-8", "window"))
    assert len(fatal) == 1, [(d["signature"], d["exception"]) for d in fatal]
    assert fatal[0]["signature"] == "module-setattr"


def test_an_untyped_copy_joins_only_a_crash_with_its_whole_message(tmp_path):
    # the same window after another crash's log: the untyped copy stays with its own crash's message
    fatal, first = _two_launches(tmp_path, CASES / "case-0684.log.gz", _redealt_as_build_would(
        tmp_path, "2.7.1", "module-setattr", 1, "sglang-8", "window"))
    assert len(fatal) == 2, [(d["signature"], d["exception"]) for d in fatal]
    setattr_ = next(d for d in fatal if d["signature"] == "module-setattr")
    assert all(o["line"] > first for o in setattr_["occurrences"])


# Held-out recordings re-dealt. vLLM 0.11+ pasted as markdown, torch 2.13: the EngineCore's `Worker failed with
# error '...'` kept the start of the `from user code:` frames; the worker's piece, its exception line elided,
# goes on to the library's `layout_key`. One crash, at the deeper place.
def test_a_reraise_whose_frames_start_a_deeper_piece_is_that_piece(tmp_path):
    fatal = _fatal(_redealt_as_build_would(tmp_path, "2.13.0", "use-kv-workspace", 2, "vllm-new", "markdown",
                                           corpus="corpus-heldout"))
    assert len(fatal) == 1, [(d["signature"], d["exception"], d["culprit"]) for d in fatal]
    assert (Path(fatal[0]["culprit"]["file"]).name, fatal[0]["culprit"]["line"]) == ("workspace.py", 11)


def test_a_reraise_never_joins_a_piece_of_another_crash_on_the_same_path(tmp_path):
    # another crash (case-0684, the item() one) printed before: the re-raise stays with its own piece
    fatal, first = _two_launches(tmp_path, CASES / "case-0684.log.gz", _redealt_as_build_would(
        tmp_path, "2.13.0", "use-kv-workspace", 2, "vllm-new", "markdown", corpus="corpus-heldout"))
    assert len(fatal) == 2, [(d["signature"], d["exception"]) for d in fatal]
    kv = next(d for d in fatal if d["signature"] == "hashlib-json-pickle")
    assert all(o["line"] > first for o in kv["occurrences"])


# pytest's output quoted in one message (`\n` escaped), torch 2.13: `ObservedValueErrorError`, "The above
# exception was the direct cause ...", and the `Unsupported: Observed exception` it led to, on one line.
def test_a_cause_on_the_same_line_as_the_exception_it_led_to_is_that_exception(tmp_path):
    fatal = _fatal(_redealt_as_build_would(tmp_path, "2.13.0", "validate-raise", 2, "pytest", "quoted",
                                           corpus="corpus-heldout"))
    assert len(fatal) == 1, [(d["signature"], d["exception"]) for d in fatal]
    assert fatal[0]["exception"]["type"] == "torch._dynamo.exc.Unsupported"


def test_a_notebook_chain_whose_pieces_point_at_each_other_keeps_the_culprit():
    """A Jupyter rendering of a chained dynamo crash (a real 2.4.1 recording, framing from
    samples/corpus/degrade.py): each of its three tracebacks names the next or the last as its cause or
    quote, a cycle; the one report is the piece that names the culprit (`from user code:`), not the first met."""
    case = SAMPLES / "corpus-degraded" / "cases" / "case-0143"
    label = json.loads(case.with_suffix(".json").read_text())
    fatal = _fatal(case.with_suffix(".log.gz"))
    assert len(fatal) == 1, [(d["signature"], d["exception"]) for d in fatal]
    want = label["culprit"]
    assert fatal[0]["culprit"]["file"].endswith(want["file_suffix"]) and fatal[0]["culprit"]["line"] == want["line"]
    assert len(fatal[0]["occurrences"]) == 3
