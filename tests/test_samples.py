"""Every bundled sample, scanned as a user would, against samples/expected.toml.

The expected culprit line is not written down anywhere: it is the line of the reproducer source that
carries the `# expect: <marker>` comment, so the test follows the code that was really run.
"""

from __future__ import annotations

import re
import sys
from pathlib import Path

import pytest

from conftest import SAMPLES

if sys.version_info >= (3, 11):
    import tomllib
else:  # pragma: no cover
    import tomli as tomllib

from crashlens.cli.scan import run_scan

EXPECTED = tomllib.loads((SAMPLES / "expected.toml").read_text()) if (SAMPLES / "expected.toml").is_file() else {}
FRAMED = sorted(k for k, v in EXPECTED.items() if v.get("kind") == "framed")


def marker_line(file_suffix: str, marker: str) -> int:
    src = (SAMPLES / "repro" / file_suffix).read_text().splitlines()
    hits = [i for i, ln in enumerate(src, 1) if re.search(rf"#\s*expect:\s*{re.escape(marker)}\s*$", ln)]
    assert len(hits) == 1, f"marker {marker!r} found {len(hits)} times in {file_suffix}"
    return hits[0]


def _scan(name: str):
    return run_scan((str(SAMPLES / name),), (), audit=False).diagnoses


@pytest.mark.parametrize("name", FRAMED)
def test_framed_sample(name):
    want = EXPECTED[name]
    diags = _scan(name)
    fatal = [d for d in diags if d.fatal]
    dynamo_fatal = [d for d in fatal if d.family == "dynamo"]
    if want.get("distinct_crashes") is not None and want.get("signature"):
        assert len(dynamo_fatal) == want["distinct_crashes"], [d.title for d in dynamo_fatal]
    if not want.get("signature"):
        assert not [d for d in diags if d.family == "dynamo" and d.fatal], "false alarm on a non-dynamo log"
        return
    top = dynamo_fatal[0] if want.get("fatal", True) else next(d for d in diags if d.family == "dynamo")
    assert top.signature == want["signature"]
    if want.get("callee"):
        assert top.callee == want["callee"]
    if want.get("culprit_file_suffix"):
        assert top.culprit is not None
        assert top.culprit.file.endswith(want["culprit_file_suffix"])
        assert top.culprit.line == marker_line(want["culprit_file_suffix"], want["culprit_marker"])
    if want.get("fullgraph") is not None:
        assert top.context.fullgraph is want["fullgraph"]
    ranks = want.get("ranks")
    if ranks:
        got = " ".join(top.ranks)
        for r in ranks:
            assert re.search(rf"TP{r}\b", got), (r, top.ranks)
    # Under fullgraph a disabled function fails too: the first fix must never be @torch.compiler.disable.
    if top.context.fullgraph:
        assert top.fixes and top.fixes[0].kind != "decorate"
        assert "torch.compiler.disable" not in top.fixes[0].title


def test_sglang_pcg_first_fix_wraps_the_library_entry_at_the_caller():
    top = _scan("sglang-1rank-pcg-fp4.log")[0]
    first = top.fixes[0]
    assert first.kind == "custom-op"
    assert "fp4_quantize" in first.title and "custom_op" in first.detail
    # it points at the line in the server code that calls the library
    assert first.file and first.file.endswith("fakeserve/layers/quantization/modelopt_quant.py")
    assert first.line == int(re.search(r"line (\d+), in apply", (SAMPLES / "raw/fakeserve-pcg-fp4.log").read_text())[1])


def test_sglang_pcg_flag_is_spelled_for_the_version_the_log_shows():
    top = _scan("sglang-1rank-pcg-fp4.log")[0]
    flags = [f for f in top.fixes if f.kind == "flag"]
    assert flags and "--disable-piecewise-cuda-graph" in flags[0].title  # server_args says 0.5.10-0.5.13
    assert top.context.server == "sglang" and top.context.mode == "sglang-pcg"


def test_torch_compile_path_is_not_fullgraph_and_may_use_compiler_disable():
    diags = _scan("sglang-torch-compile-graph-breaks.log")
    assert diags and not any(d.fatal for d in diags)
    top = diags[0]
    assert top.context.fullgraph is False and top.context.mode == "sglang-torch-compile"
    assert any(f.kind == "decorate" for f in top.fixes)


def test_vllm_engine_echo_is_the_same_crash():
    diags = [d for d in _scan("vllm-tp2-fp4.log") if d.fatal]
    assert len(diags) == 1
    assert diags[0].context.server == "vllm" and diags[0].context.fullgraph is True
    assert any(r.startswith("Worker_TP") for r in diags[0].ranks)


def test_next_failure_in_the_chain_is_announced():
    top = _scan("sglang-1rank-pcg-fp4.log")[0]
    text = " ".join(top.warnings)
    assert "functools.cache" in text or "next" in text.lower()


def test_healthy_log_has_no_crash():
    assert _scan("sglang-healthy.log") == ()


RAW_NEGATIVES = sorted(k for k, v in EXPECTED.items() if v.get("kind") == "raw" and v.get("signature") == "")


@pytest.mark.parametrize("name", RAW_NEGATIVES)
def test_recorded_non_dynamo_crash_is_not_called_dynamo(name):
    assert not [d for d in _scan(name) if d.family == "dynamo"]
