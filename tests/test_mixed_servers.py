"""Mixed servers in one run: context is per source, and each context keeps its own fixes."""

from __future__ import annotations

import json

import signal
import subprocess
import time

from conftest import SAMPLES, crashlens_exe, run_cli

# The same real crash (samples/raw/fakeserve-pcg-fp4.log) framed as SGLang 0.5.10 and as vLLM 0.11.0.
SGLANG = SAMPLES / "sglang-1rank-pcg-fp4.log"
VLLM = SAMPLES / "vllm-tp2-fp4.log"


def _doc(*paths) -> dict:
    p = run_cli("--format", "json", "--no-audit", *map(str, paths))
    assert p.returncode == 1, p.stderr
    return json.loads(p.stdout)


def _fix_titles(d: dict) -> list[str]:
    return [f["title"] for f in d["fixes"]]


def test_a_crash_under_two_servers_keeps_each_servers_fixes() -> None:
    alone = {str(p): _doc(p)["diagnoses"] for p in (SGLANG, VLLM)}
    assert all(len(ds) == 1 for ds in alone.values())
    for order in ((SGLANG, VLLM), (VLLM, SGLANG)):
        doc = _doc(*order)
        by_server = {d["context"]["server"]: d for d in doc["diagnoses"]}
        assert sorted(by_server) == ["sglang", "vllm"]
        for server, path in (("sglang", SGLANG), ("vllm", VLLM)):
            d, want = by_server[server], alone[str(path)][0]
            assert _fix_titles(d) == _fix_titles(want)  # the fixes it has when scanned alone
            assert d["context"] == want["context"]
            assert {o["source"] for o in d["occurrences"]} == {str(path)}
            assert [(o["line"], o["rank"]) for o in d["occurrences"]] == sorted(
                (o["line"], o["rank"]) for o in want["occurrences"])  # in log order
        first, second = (by_server["sglang"], by_server["vllm"]) if order[0] == SGLANG else (
            by_server["vllm"], by_server["sglang"])
        assert first["id"] == alone[str(order[0])][0]["id"]  # the first context keeps the crash's id
        assert second["id"] == f"{first['id']}-{second['context']['mode']}"
        assert any("--enforce-eager" in t for t in _fix_titles(by_server["vllm"]))
        assert not any("--enforce-eager" in t for t in _fix_titles(by_server["sglang"]))


def test_sources_that_agree_still_give_one_diagnosis() -> None:
    doc = _doc(SGLANG, SAMPLES / "sglang-2rank-pcg-fp4.log")
    assert len(doc["diagnoses"]) == 1
    occ = doc["diagnoses"][0]["occurrences"]
    assert [o["source"] for o in occ] == sorted((o["source"] for o in occ), key=[str(SGLANG), str(
        SAMPLES / "sglang-2rank-pcg-fp4.log")].index)


def test_watch_reports_the_crash_under_each_context(tmp_path) -> None:
    logs = [tmp_path / "sglang.log", tmp_path / "vllm.log"]
    logs[0].write_bytes(SGLANG.read_bytes())
    logs[1].write_bytes(VLLM.read_bytes())
    scanned = _doc(*logs)
    proc = subprocess.Popen([*crashlens_exe(), "watch", "--from-start", "--format", "jsonl", "--no-audit",
                             *map(str, logs)], stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    try:
        time.sleep(3.0)
        proc.send_signal(signal.SIGTERM)
        out, _ = proc.communicate(timeout=30)
    finally:
        proc.kill()
    reported = sorted(json.loads(x)["diagnosis"]["id"] for x in out.splitlines())
    assert len(reported) == 2 and reported == sorted(d["id"] for d in scanned["diagnoses"])
