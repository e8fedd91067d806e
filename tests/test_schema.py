"""The crashlens/v1 JSON Schema (src/crashlens/schema/crashlens-v1.json, printed by `crashlens schema`): every
JSON output crashlens writes follows it (scan json/jsonl, watch json/jsonl and --exec, ci json), on every
recorded sample."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from conftest import SAMPLES, crashlens_exe, run_cli
from crashlens.catalog import FIX_KINDS, get_catalog
from crashlens.pipeline import combine, scan_lines
from crashlens.render import json as json_render

jsonschema = pytest.importorskip("jsonschema")

LOGS = sorted(SAMPLES.glob("*.log")) + sorted((SAMPLES / "raw").glob("*.log"))
FRAMED = sorted(SAMPLES.glob("*.log"))


@pytest.fixture(scope="module")
def validator():
    p = run_cli("schema")
    assert p.returncode == 0, p.stderr
    schema = json.loads(p.stdout)
    jsonschema.Draft202012Validator.check_schema(schema)
    return jsonschema.Draft202012Validator(schema)


def valid(validator, doc) -> None:
    errors = sorted(validator.iter_errors(doc), key=lambda e: list(e.absolute_path))
    assert not errors, [f"{list(e.absolute_path)}: {e.message}" for e in errors[:5]]


def test_the_schema_printed_is_the_one_in_the_package() -> None:
    from crashlens.schema import SCHEMA_FILE

    assert run_cli("schema").stdout == Path(SCHEMA_FILE).read_bytes()
    assert Path(SCHEMA_FILE).parent.name == "schema" and Path(SCHEMA_FILE).is_file()


@pytest.mark.parametrize("log", LOGS, ids=[p.name for p in LOGS])
def test_every_recorded_sample_gives_a_valid_document(validator, log: Path) -> None:
    cat = get_catalog()
    with open(log, encoding="utf-8", errors="replace") as fh:
        n, ds = scan_lines(log.name, (ln.rstrip("\n") for ln in fh), cat)
    result = combine([(log.name, n, ds)])
    valid(validator, json.loads(json_render.render(result)))
    for d in result.diagnoses:
        valid(validator, json.loads(json_render.render_line(d)))


def test_scan_json_and_jsonl_through_the_command(validator) -> None:
    p = run_cli("scan", "--format", "json", *map(str, FRAMED))
    doc = json.loads(p.stdout)
    assert doc["diagnoses"] and p.returncode == 1
    valid(validator, doc)
    lines = run_cli("scan", "--format", "jsonl", *map(str, FRAMED)).stdout.decode().splitlines()
    assert len(lines) == len(doc["diagnoses"])
    for ln in lines:
        valid(validator, json.loads(ln))


def test_ci_json(validator, tmp_path: Path) -> None:
    out = tmp_path / "report.json"
    # the whole samples/ folder, recursively (2,600 logs with the held-out corpora): not a timing test
    p = run_cli("ci", str(SAMPLES), "-f", "json", "-o", str(out), "--fail-on", "never", timeout=300)
    assert p.returncode == 0, p.stderr
    doc = json.loads(out.read_text(encoding="utf-8"))
    assert len(doc["sources"]) >= len(LOGS)  # the folder, recursively
    valid(validator, doc)


@pytest.mark.parametrize("fmt", ["json", "jsonl"])
def test_watch_on_a_pipe(validator, fmt: str) -> None:
    log = SAMPLES / "sglang-8rank-pcg-fp4.log"
    p = run_cli("watch", "-", "--format", fmt, stdin=log.read_bytes())
    assert p.stdout == log.read_bytes()  # the log passes through; diagnoses go to stderr
    docs = [json.loads(p.stderr)] if fmt == "json" else [json.loads(ln) for ln in p.stderr.decode().splitlines()]
    assert docs
    for doc in docs:
        valid(validator, doc)


def test_watch_a_file_jsonl_and_its_exec_payload(validator, tmp_path: Path) -> None:
    log = tmp_path / "server.log"
    log.write_bytes((SAMPLES / "sglang-1rank-pcg-fp4.log").read_bytes())
    payload = tmp_path / "payload.json"
    hook = f"{sys.executable} -c \"import sys; open({str(payload)!r}, 'w').write(sys.stdin.read())\""
    proc = subprocess.Popen([*crashlens_exe(), "watch", str(log), "--from-start", "--format", "jsonl",
                             "--exec", hook], stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                            env={**os.environ, "NO_COLOR": "1"})
    try:
        assert proc.stdout is not None
        line = proc.stdout.readline()
        deadline = time.monotonic() + 30
        while not (payload.is_file() and payload.stat().st_size) and time.monotonic() < deadline:
            time.sleep(0.05)
    finally:
        proc.send_signal(signal.SIGINT)
        proc.communicate(timeout=30)
    valid(validator, json.loads(line))
    valid(validator, json.loads(payload.read_text(encoding="utf-8")))


def test_the_schema_is_strict_where_the_contract_is(validator) -> None:
    doc = json.loads(run_cli("--format", "json", str(SAMPLES / "sglang-1rank-pcg-fp4.log")).stdout)
    d = doc["diagnoses"][0]
    for broken in (
        {**doc, "schema": "crashlens/v2"},
        {k: v for k, v in doc.items() if k != "diagnoses"},
        {**doc, "diagnoses": [{k: v for k, v in d.items() if k != "fatal"}]},
        {**doc, "diagnoses": [{**d, "confidence": 1.5}]},
        {**doc, "diagnoses": [{**d, "fixes": [{**d["fixes"][0], "kind": "hide-it"}]}]},
        {**doc, "diagnoses": [{**d, "occurrences": []}]},
    ):
        assert not validator.is_valid(broken)


def test_documented_additions_stay_valid(validator) -> None:
    """New fields may be added within crashlens/v1 (README): a consumer validating today's output with this
    schema must not reject tomorrow's. `groups` (mine) and `rounds` (run) are reserved top-level additions."""
    doc = json.loads(run_cli("--format", "json", str(SAMPLES / "sglang-1rank-pcg-fp4.log")).stdout)
    d = doc["diagnoses"][0]
    extended = {**doc, "groups": [{"id": "g1", "diagnoses": [d["id"]]}], "rounds": [{"round": 1}],
                "diagnoses": [{**d, "new_field": 1, "context": {**d["context"], "extra": True}}]}
    valid(validator, extended)


def test_fix_kinds_in_the_schema_are_the_catalog_kinds(validator) -> None:
    fix = validator.schema["$defs"]["fix"]["properties"]["kind"]["enum"]
    assert set(fix) == FIX_KINDS


def test_audit_json(validator) -> None:
    p = run_cli("audit", "fakeinfer.quantization.fp4_quantization:fp4_quantize", "--site-packages",
                str(SAMPLES / "repro"), "--format", "json")
    doc = json.loads(p.stdout)
    assert doc["findings"], p.stderr
    valid(validator, doc)
