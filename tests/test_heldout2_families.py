"""Families the second held-out recordings (samples/corpus-heldout2, real torch runs recorded by
samples/corpus/record.py) showed were missing or misrouted; see samples/corpus-heldout2/misses.md."""

from __future__ import annotations

import gzip
from pathlib import Path

import pytest

from conftest import SAMPLES
from crashlens.cli.scan import run_scan
from crashlens.render.json import document

RAW = SAMPLES / "corpus-heldout2" / "raw"


def _fatal(tmp_path: Path, version: str, name: str) -> dict:
    log = tmp_path / "run.log"
    log.write_bytes(gzip.decompress((RAW / f"t{version}" / f"{name}.log.gz").read_bytes()))
    (d,) = [d for d in document(run_scan((str(log),), (), audit=False, jobs=1))["diagnoses"] if d["fatal"]]
    return d


@pytest.mark.parametrize("version", ["2.1.2", "2.4.1", "2.7.1", "2.13.0"])
def test_a_distributed_query_without_a_process_group_is_the_programs_error_not_a_torch_bug(tmp_path, version):
    """dist.get_rank() with no process group: TorchRuntimeError (2.1), InternalTorchDynamoError (2.4-2.7),
    Observed exception with the ValueError in the chain (2.13). It fails in eager too: initialise the group
    or check is_initialized(), never "upgrade torch, it is inside torch.compile"."""
    d = _fatal(tmp_path, version, "dist-rank")
    first = d["fixes"][0]
    assert "init_process_group" in first["title"] and "is_initialized" in first["title"]
    assert first["kind"] != "upgrade" and "inside torch.compile" not in first["title"]
    assert d["culprit"]["file"].endswith("heldout_rec2/dist_rank.py") and d["culprit"]["line"] == 11


@pytest.mark.parametrize("version", ["2.4.1", "2.7.1", "2.13.0"])
def test_torch_cond_branches_that_disagree_are_fixed_in_the_branches(tmp_path, version):
    """2.4 raises the branch-metadata Unsupported as the cause of UncapturedHigherOrderOpError ("Scroll up to find
    out what causes the graph break"); 2.7+ raise it from fake propagation of `cond`. Either way the fix is to
    make both branches return the same dtype, not to move the call out or to fix "the op"."""
    d = _fatal(tmp_path, version, "cond-dtype")
    title = d["fixes"][0]["title"]
    assert "same dtype" in title and "torch.cond" in title
    assert d["culprit"]["file"].endswith("heldout_rec2/cond_dtype.py") and d["culprit"]["line"] == 18


def test_a_plain_exception_dynamo_turned_into_unsupported_is_not_an_internal_dynamo_bug(tmp_path):
    """torch 2.1's proxy_args_kwargs catches its own NotImplementedError and raises `Unsupported: call_function
    args: UserFunctionVariable() ...` (saved_tensors_hooks(pack, unpack) in forward): dynamo's verdict is
    "unsupported", so the fix is to move the call out, not "upgrade torch, it is inside torch.compile"."""
    d = _fatal(tmp_path, "2.1.2", "saved-tensors-hooks")
    assert d["signature"] != "dynamo-internal-assertion"
    first = d["fixes"][0]
    assert first["kind"] != "upgrade" and "inside torch.compile" not in first["title"]
    assert "is_compiling" in first["title"] + first["detail"]


CASES = SAMPLES / "corpus-heldout2" / "cases"


def _case(name: str) -> list[dict]:
    doc = document(run_scan((str(CASES / name),), (), audit=False, jobs=1))
    return [d for d in doc["diagnoses"] if d["family"] == "dynamo"]


def test_a_reraise_that_kept_the_user_code_section_gives_the_crash_its_culprit():
    """vLLM markdown paste: each worker's copy lost its `from user code:` lines to an elision ("..."), the
    EngineCore's `Worker failed with error '...'` quotes str(e) with them. One crash: its culprit is there."""
    (d,) = [d for d in _case("case-0033.log.gz") if d["fatal"]]
    assert d["culprit"]["file"].endswith("heldout_rec2/partial_struct.py") and d["culprit"]["line"] == 15


def test_a_joined_paste_splits_before_from_user_code_after_a_message_ending_in_a_bracket():
    """A pytest paste that lost its newlines: 2.1's `call_method ... __call__ [] {}` message ends in `{}`,
    which is not a bullet leading the next line; `from user code:` is a line of its own, with its frames."""
    (d,) = [d for d in _case("case-0048.log.gz") if d["fatal"]]
    assert d["culprit"]["file"].endswith("heldout_rec2/site-packages/tilekern/ops.py") and d["culprit"]["line"] == 19

