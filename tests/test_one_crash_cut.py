"""One crash, one report, where a copy of the crash was cut: a rank's copy that stops at a cause of the chain
(`During handling of the above exception, another exception occurred:` and then nothing), and a server's
re-raise whose quoted message a terminal's hard wrap cut before any certain cut showed the wrap's width.

The fixtures are recorded cases read by path (real torch runs in hand-written framing, degraded by
samples/corpus/degrade.py or fragment.py: see each corpus's README); each label says its run died of one
uncaught exception chain.
"""

from __future__ import annotations

import gzip
import json
from pathlib import Path

import pytest
from conftest import SAMPLES

from crashlens.cli.scan import run_scan
from crashlens.render.json import document


def _fatal(log: Path) -> list[dict]:
    doc = document(run_scan((str(log),), (), audit=False, jobs=1))
    return [d for d in doc["diagnoses"] if d["fatal"]]


def _case(corpus: str, case: str) -> tuple[Path, dict]:
    base = SAMPLES / corpus / "cases" / case
    return base.with_suffix(".log.gz"), json.loads(base.with_suffix(".json").read_text())


def _one_report(corpus: str, case: str) -> dict:
    log, label = _case(corpus, case)
    assert label["outcome"]["exit_code"] and label["outcome"]["exception_chain"], "not a one-crash run"
    fatal = _fatal(log)
    assert len(fatal) == 1, [(d["signature"], d["exception"], d["culprit"]) for d in fatal]
    want = label["culprit"]
    got = fatal[0]["culprit"]
    assert got["file"].endswith(want["file_suffix"]) and got["line"] == want["line"], got
    return fatal[0]


def test_a_ranks_copy_cut_at_a_cause_of_the_chain_is_the_crash_the_other_rank_shows_whole():
    # vLLM TP=2, torch 2.1.2: rank 1 prints GuardOnDataDependentSymNode -> RuntimeError -> UserError; rank 0's
    # copy is cut after the RuntimeError's "During handling of the above exception" line (the log's tail cut).
    d = _one_report("corpus-heldout2", "case-0024")
    assert d["exception"]["type"] == "torch._dynamo.exc.UserError", "the whole chain's exception is shown"
    assert set(d["ranks"]) == {"VllmWorker rank=0", "VllmWorker rank=1"}


@pytest.mark.parametrize("case, ranks", [
    ("case-0085", 8),   # SGLang TP=8, torch 2.1.2, wrapped at 100 columns: `... error: Failed running call_function <func`
    ("case-0338", 2),   # SGLang TP=2, torch 2.13, wrapped and indented: `... error: Attempted to use `torch.nn.Paramet`
    ("case-0469", 0),   # SGLang TP=1, torch 2.13, wrapped at 120: `... error: Consider annotating ... torch._check*(). Could`
])
def test_a_reraise_whose_quote_a_wrap_cut_before_the_width_was_known_is_the_crash_it_quotes(case, ranks):
    """SGLang's first `Piecewise CUDA Graph failed with error: <str(e)>` line is the first line of the log a
    hard wrap cut at the exception: nothing had shown the wrap's width yet, so its rest stays a line apart
    and the quote is the start of the crash's message, without the server's type."""
    d = _one_report("corpus-degraded", case)
    assert d["exception"]["type"].startswith("torch._dynamo.exc."), d["exception"]
    assert len(d["ranks"]) >= ranks, d["ranks"]


@pytest.mark.parametrize("first, second", [
    (("corpus-heldout2", "case-0024"), ("corpus-heldout2", "case-0079")),
    (("corpus-degraded", "case-0469"), ("corpus-degraded", "case-0085")),
])
def test_two_different_crashes_with_cut_copies_stay_two_reports(tmp_path, first, second):
    """Two runs' logs in one file: a cut copy joins only the crash whose chain or message it is the start of."""
    both = tmp_path / "two-launches.log"
    both.write_bytes(gzip.decompress(_case(*first)[0].read_bytes()) + gzip.decompress(_case(*second)[0].read_bytes()))
    fatal = _fatal(both)
    assert len(fatal) == 2, [(d["signature"], d["exception"], d["culprit"]) for d in fatal]
    want = {(_case(*c)[1]["culprit"]["file_suffix"], _case(*c)[1]["culprit"]["line"]) for c in (first, second)}
    got = {(next(w for w, _l in want if d["culprit"]["file"].endswith(w)), d["culprit"]["line"]) for d in fatal}
    assert got == want



def test_the_culprit_of_8_interleaved_ranks_is_the_frame_dynamo_traced_not_a_harness_frame_run_into_it():
    """SGLang TP=8, torch 2.13 (heldout3 case-0289): each rank's glog `Error while creating guard` record shows
    the user stack (the frame that specialised the dynamic dimension), then the guard's `Created at:` frames;
    among 8 ranks' lines the harness frame of another rank's `Scheduler hit an exception` traceback
    (`run.py` `importlib.import_module(...).main(...)`) runs into one such stack. The other ranks' tracebacks
    show that frame on the program's path into the compiled function (before eval_frame): a copy naming it
    names no place where dynamo stopped, and the report's culprit is the traced frame."""
    log, label = _case("corpus-heldout3", "case-0289")
    fatal = _fatal(log)
    assert len(fatal) == 1
    want = label["culprit"]
    got = fatal[0]["culprit"]
    assert got["file"].endswith(want["file_suffix"]) and got["line"] == want["line"], got
    assert len(fatal[0]["ranks"]) == 8, fatal[0]["ranks"]
