"""Stopped from outside: SIGTERM and SIGHUP as Ctrl-C, and a reader that leaves early; the same outcome every time."""

from __future__ import annotations

import json
import os
import shlex
import signal
import subprocess
import time
from pathlib import Path

import pytest

from conftest import SAMPLES, crashlens_exe, wait_holding

# Real recordings in SGLang framing (samples/README.md): eight ranks print one crash, many copies in all.
LOG8 = SAMPLES / "sglang-8rank-pcg-fp4.log"
LOG1 = SAMPLES / "sglang-1rank-pcg-fp4.log"
TIMEOUT = 30

pytestmark = pytest.mark.skipif(os.name != "posix", reason="POSIX signals and pipes")


def _env() -> dict[str, str]:
    e = {k: v for k, v in os.environ.items() if k not in ("GITHUB_ACTIONS", "GITHUB_STEP_SUMMARY")}
    e["NO_COLOR"] = "1"
    return e


def _summary(doc: dict) -> list[tuple[str, int]]:
    return [(d["signature"], len(d["occurrences"])) for d in doc["diagnoses"]]


def _scan_json(log: Path) -> dict:
    p = subprocess.run([*crashlens_exe(), "--format", "json", "--no-audit", str(log)], capture_output=True,
                       timeout=TIMEOUT, env=_env())
    return json.loads(p.stdout)


# --- a reader that leaves early ----------------------------------------------------------------------------------


@pytest.mark.parametrize("args", [[], ["--format", "json"], ["--format", "jsonl"], ["ci", "-f", "json"],
                                  ["ci", "-f", "markdown"]])
def test_a_closed_stdout_gives_the_exit_code_of_the_findings(args: list[str]) -> None:
    """`crashlens LOG | head` exits as `crashlens LOG > file` does: here the reader has left before the
    first byte, which is the case that used to exit 0 instead of 1."""
    to_file = subprocess.run([*crashlens_exe(), *args, str(LOG8)], capture_output=True, timeout=TIMEOUT, env=_env())
    assert to_file.returncode == 1
    r, w = os.pipe()
    os.close(r)  # the reader is gone before crashlens writes anything
    p = subprocess.run([*crashlens_exe(), *args, str(LOG8)], stdout=w, stderr=subprocess.PIPE, timeout=TIMEOUT,
                       env=_env())
    os.close(w)
    assert p.returncode == 1, p.stderr
    assert p.stderr == b""


def test_piped_into_head_exits_the_same_every_time() -> None:
    cmd = f"set -o pipefail; {shlex.join(crashlens_exe())} '{LOG8}' | head -1 >/dev/null; echo $?"
    codes = {subprocess.run(["bash", "-c", cmd], capture_output=True, timeout=TIMEOUT, env=_env()).stdout.strip()
             for _ in range(6)}
    assert codes == {b"1"}


def test_follow_reader_that_quits_early_changes_no_diagnosis() -> None:
    want = _summary(_scan_json(LOG8))
    assert len(want) == 1 and want[0][1] > 8  # one crash, every rank's copies (the issue saw 17 become 1)
    cmd = (f"cat '{LOG8}' | {shlex.join(crashlens_exe())} --follow --format json --no-audit 2>&3 | head -1 >/dev/null;"
           " echo ${PIPESTATUS[1]}")
    for _ in range(3):
        code, report = _run_with_fd3(cmd)
        assert code == b"1"
        assert _summary(json.loads(report)) == want


def _run_with_fd3(cmd: str) -> tuple[bytes, bytes]:
    """Run `cmd` in bash with its fd 3 a file; (what it printed, what went to fd 3)."""
    import tempfile

    with tempfile.TemporaryFile() as fd3:
        p = subprocess.run(["bash", "-c", f"exec 3>&{fd3.fileno()}; {cmd}"], capture_output=True,
                           pass_fds=(fd3.fileno(),), env=_env(), timeout=TIMEOUT)
        fd3.seek(0)
        return p.stdout.strip(), fd3.read()


def test_watch_stops_when_the_reader_of_its_reports_leaves() -> None:
    r, w = os.pipe()
    os.close(r)
    p = subprocess.run([*crashlens_exe(), "watch", "--from-start", "--format", "jsonl", "--no-audit", str(LOG1)],
                       stdout=w, stderr=subprocess.PIPE, timeout=TIMEOUT, env=_env())
    os.close(w)
    assert p.returncode == 1 and b"Traceback" not in p.stderr


# --- SIGTERM and SIGHUP, as Ctrl-C -------------------------------------------------------------------------------



@pytest.mark.skipif(not Path("/proc/self/fd").is_dir(), reason="needs /proc to see the watcher is ready")
@pytest.mark.parametrize("sig, code, word", [(signal.SIGTERM, 143, b"SIGTERM"), (signal.SIGHUP, 129, b"SIGHUP"),
                                             (signal.SIGINT, 130, b"interrupted")])
def test_watch_json_writes_its_document_when_stopped(sig: int, code: int, word: bytes) -> None:
    want = _summary(_scan_json(LOG8))
    proc = subprocess.Popen([*crashlens_exe(), "watch", "--from-start", "--format", "json", "--no-audit", str(LOG8)],
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, env=_env())
    try:
        wait_holding(proc, LOG8)
        time.sleep(1.5)  # read and diagnosed within a few polls
        proc.send_signal(sig)
        out, err = proc.communicate(timeout=TIMEOUT)
    finally:
        proc.kill()
    assert proc.returncode == code, err
    assert err.count(b"\n") == 1 and word in err and b"Traceback" not in err
    doc = json.loads(out)
    assert doc["schema"] == "crashlens/v1" and _summary(doc) == want


@pytest.mark.parametrize("sig, code", [(signal.SIGTERM, 143), (signal.SIGHUP, 129)])
def test_follow_writes_its_document_when_stopped(sig: int, code: int) -> None:
    want = _summary(_scan_json(LOG8))
    data = LOG8.read_bytes()
    proc = subprocess.Popen([*crashlens_exe(), "--follow", "--format", "json", "--no-audit"], stdin=subprocess.PIPE,
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, env=_env())
    try:
        assert proc.stdin is not None and proc.stdout is not None
        proc.stdin.write(data)
        proc.stdin.flush()  # the writer stays: only the signal ends this
        got = b""
        while len(got) < len(data):
            chunk = proc.stdout.read1(65536)
            assert chunk, "the input did not come through"
            got += chunk
        assert got == data
        time.sleep(1.0)  # the last records close after their quiet period
        proc.send_signal(sig)
        _, err = proc.communicate(timeout=TIMEOUT)
    finally:
        proc.kill()
    assert proc.returncode == code
    text, _, last = err.rstrip(b"\n").rpartition(b"\n")
    assert last.startswith(b"crashlens: stopped by ")
    assert _summary(json.loads(text)) == want
