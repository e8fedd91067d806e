"""A traceback printed inside WARNING log records is one the program logged and went on from (dynamo's
suppress_errors `WON'T CONVERT ... due to:` + the traceback, a handled `exc_info=True`), also when a paste
cut the record's header. The log is a real torch 2.7.1 run (samples/corpus-heldout/raw): a backend raised
under suppress_errors=True and dynamo fell back to eager."""

from __future__ import annotations

import gzip
import re

from conftest import SAMPLES
from crashlens.cli.scan import run_scan
from crashlens.render.json import document

RUN = SAMPLES / "corpus-heldout" / "raw" / "t2.7.1" / "clean-suppressed-backend.log.gz"
GLOG = re.compile(r"^[VIWEC]\d{4} \d\d:\d\d:\d\d\.\d+ +\d+ \S+:\d+\] ")


def _dynamo(tmp_path, text: str) -> list[dict]:
    log = tmp_path / "run.log"
    log.write_text(text)
    return [d for d in document(run_scan((str(log),), (), audit=False, jobs=1))["diagnoses"] if d["family"] == "dynamo"]


def _lines() -> list[str]:
    return gzip.decompress(RUN.read_bytes()).decode().splitlines()[1:]  # after record.py's header


def test_the_whole_suppressed_error_is_a_non_fatal_finding(tmp_path):
    diags = _dynamo(tmp_path, "\n".join(_lines()) + "\n")
    assert diags and not any(d["fatal"] for d in diags)


def test_a_warning_records_traceback_without_its_header_is_still_not_fatal(tmp_path):
    lines = _lines()
    cut = next(i for i, ln in enumerate(lines) if "File " in ln) + 6  # the paste starts inside the traceback
    assert "WON'T CONVERT" not in "\n".join(lines[cut:])
    diags = _dynamo(tmp_path, "\n".join(lines[cut:]) + "\n")
    assert diags, "the backend's failure is still a finding"
    assert not any(d["fatal"] for d in diags), [d["signature"] for d in diags]


def test_the_same_traceback_outside_a_log_record_is_fatal(tmp_path):
    # what makes it non-fatal is the WARNING record, not the text: printed by sys.excepthook it ends the run
    lines = [GLOG.sub("", ln) for ln in _lines()]
    start = next(i for i, ln in enumerate(lines) if ln.startswith("Traceback (most recent call last):"))
    end = next(i for i, ln in enumerate(lines) if ln.startswith("RuntimeError: flaky_backend"))
    diags = _dynamo(tmp_path, "\n".join(lines[start:end + 1]) + "\n")
    assert any(d["fatal"] for d in diags)
