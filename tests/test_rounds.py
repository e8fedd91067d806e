"""Rounds across restarts: a log appended to over several launches of a server, in scan, watch and --follow."""

from __future__ import annotations

import json
import os
import subprocess
import time
from pathlib import Path

import pytest

from conftest import SAMPLES, crashlens_exe, run_cli, wait_holding

from crashlens.catalog import get_catalog
from crashlens.pipeline import combine, scan_lines
from crashlens.read import iter_lines

# Three SGLang launches (tp=2) appended to one file: the subprocess probe crash, the same crash again, then
# the next blocker of the chain. Real tracebacks, hand-written framing (samples/frame.py, samples/README.md).
RESTARTS = SAMPLES / "sglang-restarts-fp4.log"
PROBE, CLOCK = "subprocess-thread-lock", "time-call"
TIMEOUT = 30


def _launches() -> list[bytes]:
    """The sample cut where each launch begins (its server_args line; the header stays with the first)."""
    lines = RESTARTS.read_bytes().split(b"\n")
    starts = [i for i, line in enumerate(lines) if b"] server_args=ServerArgs(" in line]
    assert len(starts) == 3
    cuts = [0, *starts[1:], len(lines)]
    return [b"\n".join(lines[a:b]) + (b"\n" if b < len(lines) else b"") for a, b in zip(cuts, cuts[1:])]


def _scan(*paths: Path) -> dict:
    p = run_cli("--format", "json", "--no-audit", *map(str, paths))
    assert p.returncode == 1, p.stderr
    return json.loads(p.stdout)


def test_scan_json_gives_every_occurrence_its_round() -> None:
    doc = _scan(RESTARTS)
    by_sig = {d["signature"]: d for d in doc["diagnoses"]}
    assert sorted(by_sig) == [PROBE, CLOCK]
    probe, clock = by_sig[PROBE], by_sig[CLOCK]
    # Both ranks' copies fold into one diagnosis within a round, and a round's copies into the crash.
    assert sorted({(o["round"], o["rank"]) for o in probe["occurrences"]}) == [(1, "TP0"), (1, "TP1"), (2, "TP0"),
                                                                             (2, "TP1")]
    assert {o["round"] for o in clock["occurrences"]} == {3}
    lines = [o["line"] for o in probe["occurrences"]]
    assert lines == sorted(lines)  # occurrences in log order


def test_scan_shows_the_rounds_in_order() -> None:
    p = run_cli("--no-audit", "--no-color", str(RESTARTS))
    out = p.stdout.decode()
    rows = [line for line in out.splitlines() if " round " in line and ", line " in line]
    assert [r.split(" round ")[1].split(",")[0] for r in rows] == ["1", "2", "3"]
    assert "#1 again" in rows[1] and "#1 A subprocess call" in rows[0]
    assert "#1 gone" in rows[2] and "#2 " in rows[2] and "again" not in rows[2]


def test_scan_jsonl_lines_carry_round_and_again() -> None:
    p = run_cli("--format", "jsonl", "--no-audit", str(RESTARTS))
    docs = {json.loads(x)["diagnosis"]["signature"]: json.loads(x) for x in p.stdout.splitlines()}
    assert (docs[PROBE]["round"], docs[PROBE]["again"]) == (1, True)  # it came back in round 2
    assert (docs[CLOCK]["round"], docs[CLOCK]["again"]) == (3, False)


def test_one_launch_is_one_round() -> None:
    """A second banner of the same launch (vLLM's engine line after its API server's) begins nothing; nor
    does a launch without a crash (a healthy restart)."""
    for log in ("vllm-tp2-fp4.log", "sglang-8rank-pcg-fp4.log"):
        doc = _scan(SAMPLES / log)
        assert {o["round"] for d in doc["diagnoses"] for o in d["occurrences"]} == {1}, log
        assert b" round " not in run_cli("--no-audit", "--no-color", str(SAMPLES / log)).stdout
    cat = get_catalog()
    healthy = list(iter_lines(open(SAMPLES / "sglang-healthy.log", "rb")))
    crash = list(iter_lines(open(SAMPLES / "sglang-1rank-pcg-fp4.log", "rb")))
    result = combine([("x.log", *scan_lines("x.log", healthy + crash, cat))])
    assert {o.round for d in result.diagnoses for o in d.occurrences} == {1}
    assert result.rounds == ()
    # After the crash, the next launch is round 2.
    result = combine([("x.log", *scan_lines("x.log", healthy + crash + healthy + crash, cat))])
    assert {o.round for d in result.diagnoses for o in d.occurrences} == {1, 2}


def test_rounds_are_counted_per_source(tmp_path: Path) -> None:
    a, b = tmp_path / "a.log", tmp_path / "b.log"
    launches = _launches()
    a.write_bytes(b"".join(launches))
    b.write_bytes(launches[2])  # only the last launch: its round 1
    doc = _scan(a, b)
    clock = next(d for d in doc["diagnoses"] if d["signature"] == CLOCK)
    assert {(Path(o["source"]).name, o["round"]) for o in clock["occurrences"]} == {("a.log", 3), ("b.log", 1)}


# --- live: watch and --follow --------------------------------------------------------------------------------


def _reports(stdout: bytes) -> list[tuple[int, bool, str, list[str]]]:
    out = []
    for line in stdout.splitlines():
        doc = json.loads(line)
        out.append((doc["round"], doc["again"], doc["diagnosis"]["signature"], doc["gone"]))
    return out


def _ids(stdout: bytes) -> dict[str, str]:
    return {json.loads(x)["diagnosis"]["signature"]: json.loads(x)["diagnosis"]["id"] for x in stdout.splitlines()}


@pytest.mark.skipif(not Path("/proc/self/fd").is_dir(), reason="needs /proc to see the watcher is ready")
def test_watch_reports_each_round_with_again_on_the_second(tmp_path: Path) -> None:
    """The done-when of issue 14: a log appended over three launches shows rounds 1, 2 and 3 in watch."""
    log = tmp_path / "server.log"
    log.touch()
    proc = subprocess.Popen([*crashlens_exe(), "watch", "--format", "jsonl", "--no-audit", "--quiet-period", "0.3",
                             str(log)], stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    try:
        wait_holding(proc, log)
        with open(log, "ab") as fh:
            for launch in _launches():  # a supervisor restarts the server after each crash
                fh.write(launch)
                fh.flush()
                time.sleep(1.0)
        time.sleep(0.5)
        proc.terminate()
        out, err = proc.communicate(timeout=TIMEOUT)
    finally:
        proc.kill()
    assert proc.returncode == 143, err
    reports = _reports(out)
    probe = _ids(out)[PROBE]
    assert reports == [(1, False, PROBE, []), (2, True, PROBE, []), (3, False, CLOCK, [probe])]


@pytest.mark.parametrize("args", [["--follow"], ["watch", "-"]])
def test_follow_reports_each_round_once_with_again_on_the_second(args: list[str]) -> None:
    p = run_cli(*args, "--format", "jsonl", "--no-audit", stdin=RESTARTS.read_bytes(), timeout=TIMEOUT)
    assert p.returncode == 1
    assert p.stdout == RESTARTS.read_bytes()  # passed through unchanged
    probe = _ids(p.stderr)[PROBE]
    assert _reports(p.stderr) == [(1, False, PROBE, []), (2, True, PROBE, []), (3, False, CLOCK, [probe])]


def test_watch_terminal_says_again_and_gone() -> None:
    p = run_cli("--follow", "--no-audit", "--no-color", stdin=RESTARTS.read_bytes(), timeout=TIMEOUT)
    err = p.stderr.decode()
    assert "round 2 of <stdin>: #1 again" in err
    assert "round 3 of <stdin>: #1 gone · #2 new" in err
    assert err.count("1. A subprocess call") == 1  # the panel once; its return is one line


@pytest.mark.skipif(not Path("/proc/self/fd").is_dir(), reason="needs /proc to see the watcher is ready")
def test_rotation_after_a_crash_begins_the_next_round(tmp_path: Path) -> None:
    log = tmp_path / "server.log"
    first, second, _ = _launches()
    log.write_bytes(b"")
    proc = subprocess.Popen([*crashlens_exe(), "watch", "--format", "jsonl", "--no-audit", "--quiet-period", "0.3",
                             str(log)], stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    try:
        wait_holding(proc, log)
        with open(log, "ab") as fh:
            fh.write(first)
        time.sleep(1.0)
        os.rename(log, tmp_path / "server.log.1")  # logrotate: rename, then the restarted server opens anew
        # The same crash without its start-up lines: only the new file says a new launch began.
        body = second.split(b"\n", 1)[1]
        with open(log, "wb") as fh:
            fh.write(body)
        time.sleep(1.5)
        proc.terminate()
        out, err = proc.communicate(timeout=TIMEOUT)
    finally:
        proc.kill()
    assert [(r, again) for r, again, _, _ in _reports(out)] == [(1, False), (2, True)], err



def test_each_round_is_diagnosed_with_its_own_launch_flags(tmp_path: Path) -> None:
    """A restart with other flags (PCG, then --enable-torch-compile): each round's crashes get the context
    and the fixes of the launch they happened in, as when its log is read alone."""
    pcg, tc = SAMPLES / "sglang-1rank-pcg-fp4.log", SAMPLES / "sglang-torch-compile-graph-breaks.log"
    log = tmp_path / "server.log"
    log.write_bytes(pcg.read_bytes() + tc.read_bytes())
    p = run_cli("--format", "json", "--no-audit", str(log))
    got = {}
    for d in json.loads(p.stdout)["diagnoses"]:
        for r in {o["round"] for o in d["occurrences"]}:
            got[(r, d["signature"])] = (d["context"]["mode"], d["context"]["fullgraph"], [f["title"] for f in d["fixes"]])
    for r, alone in ((1, pcg), (2, tc)):
        for d in json.loads(run_cli("--format", "json", "--no-audit", str(alone)).stdout)["diagnoses"]:
            assert got[(r, d["signature"])] == (d["context"]["mode"], d["context"]["fullgraph"],
                                                [f["title"] for f in d["fixes"]]), (r, d["signature"])
