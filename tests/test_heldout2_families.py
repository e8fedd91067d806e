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
