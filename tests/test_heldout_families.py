"""Two families the held-out recordings showed were missing: a dimension marked dynamic that the traced code
specialises (torch raises ConstraintViolationError from torch.fx.experimental.symbolic_shapes, after logging
`Error while creating guard:` with its traceback), and torch.manual_seed inside the compiled region.
The logs are real torch runs (samples/corpus-heldout/raw, recorded by samples/corpus/record.py)."""

from __future__ import annotations

import gzip
from pathlib import Path

import pytest

from conftest import SAMPLES
from crashlens.cli.scan import run_scan
from crashlens.render.json import document

RAW = SAMPLES / "corpus-heldout" / "raw"


def _diagnoses(tmp_path: Path, version: str) -> list[dict]:
    log = tmp_path / "run.log"
    log.write_bytes(gzip.decompress((RAW / f"t{version}" / "dynamic-batch-branch.log.gz").read_bytes()))
    doc = document(run_scan((str(log),), (), audit=False, jobs=1))
    return [d for d in doc["diagnoses"] if d["family"] == "dynamo"]


@pytest.mark.parametrize("version", ["2.1.2", "2.4.1", "2.7.1", "2.13.0"])
def test_specialised_dynamic_dim_is_the_users_shape_spec_not_a_torch_bug(tmp_path, version):
    diags = _diagnoses(tmp_path, version)
    fatal = [d for d in diags if d["fatal"]]
    assert len(fatal) == 1, [d["signature"] for d in fatal]  # the logged guard error and the raise are one crash
    first = (fatal[0]["fixes"][0]["title"] + " " + fatal[0]["fixes"][0]["detail"]).lower()
    assert "maybe_mark_dynamic" in first
    assert "inside torch.compile itself" not in first and "upgrade" not in fatal[0]["fixes"][0]["title"].lower()


def test_the_culprit_comes_from_the_errors_user_stack(tmp_path):
    # torch 2.9+ prints the specialising frame under the error (`User stack:`), and no dynamo frame at all
    (d,) = [d for d in _diagnoses(tmp_path, "2.13.0") if d["fatal"]]
    assert d["culprit"]["file"].endswith("heldout_rec/dynamic_batch_branch.py") and d["culprit"]["line"] == 10



@pytest.mark.parametrize("version", ["2.4.1", "2.7.1", "2.13.0"])
def test_seeding_inside_the_compiled_region_is_moved_out_not_upgraded_away(tmp_path, version):
    """torch.manual_seed in forward: dynamo refuses RNG-state calls on purpose (2.4+), so the fix is to seed
    outside the compiled region, not to wait for a release that traces it."""
    log = tmp_path / "run.log"
    log.write_bytes(gzip.decompress((RAW / f"t{version}" / "seed-in-forward.log.gz").read_bytes()))
    (d,) = [d for d in document(run_scan((str(log),), (), audit=False, jobs=1))["diagnoses"] if d["fatal"]]
    first = d["fixes"][0]
    assert first["kind"] != "upgrade" and "outside the compiled region" in first["title"]
    assert d["culprit"]["file"].endswith("heldout_rec/seed_in_forward.py") and d["culprit"]["line"] == 9


def _first_fix(tmp_path, path: Path) -> dict:
    log = tmp_path / "run.log"
    log.write_bytes(gzip.decompress(path.read_bytes()))
    (d,) = [d for d in document(run_scan((str(log),), (), audit=False, jobs=1))["diagnoses"] if d["fatal"]]
    return d["fixes"][0]


@pytest.mark.parametrize("version", ["2.4.1", "2.7.1", "2.13.0"])
def test_a_c_builtin_fed_text_is_computed_once_not_made_a_custom_op(tmp_path, version):
    # `salt = zlib.crc32(self.name.encode()) % 97`: the input is a string, so the result is a constant
    first = _first_fix(tmp_path, RAW / f"t{version}" / "crc-tag.log.gz")
    assert first["kind"] == "precompute" and "__init__" in first["title"], first["title"]


def test_a_c_builtin_fed_the_calls_data_still_gets_the_custom_op(tmp_path):
    # `return zlib.crc32(token_ids)` on this call's token ids (samples/corpus): per-call data, no constant
    first = _first_fix(tmp_path, SAMPLES / "corpus" / "raw" / "t2.13.0" / "c-extension-call.log.gz")
    assert first["kind"] == "custom-op", first["title"]
