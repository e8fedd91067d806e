"""`crashlens mine` tells the user about a damaged input the same way on every engine: once, on the stderr
of the command they ran (a Ray task's own stderr is not theirs)."""

from __future__ import annotations

import gzip
import json

import pytest
from conftest import SAMPLES, run_cli


def _cut_gz(tmp_path):
    raw = (SAMPLES / "raw" / "runtime-error-in-compiled.log").read_bytes()
    filler = b"".join(b"[2026-04-16 10:23:%02d] INFO: 10.0.0.%d - \"POST /generate HTTP/1.1\" 200 OK\n" % (i % 60, i % 250)
                      for i in range(20000))
    data = gzip.compress(raw + filler + raw)
    (tmp_path / "cut.log.gz").write_bytes(data[: len(data) - 20])
    return tmp_path / "cut.log.gz"


def _warnings(stderr: bytes) -> list[str]:
    return [ln for ln in stderr.decode().splitlines() if ln.startswith("crashlens: warning:")]


@pytest.mark.parametrize("jobs", ["1", "2"])
def test_a_cut_gz_is_one_warning_naming_it(tmp_path, jobs):
    cut = _cut_gz(tmp_path)
    (tmp_path / "other.log").write_bytes((SAMPLES / "raw" / "print-call.log").read_bytes())
    p = run_cli("mine", "--all", "--format", "json", "-j", jobs, str(tmp_path))
    assert p.returncode == 0, p.stderr.decode()
    (w,) = _warnings(p.stderr)
    assert str(cut) in w and "stopped reading" in w
    assert {g["signature"] for g in json.loads(p.stdout)["groups"]} >= {"print-call"}


def test_a_cut_gz_warning_comes_back_from_ray(tmp_path):
    pytest.importorskip("ray", reason="Ray is not installed (pip install '.[ray]')")
    cut = _cut_gz(tmp_path)
    p = run_cli("mine", "--format", "json", "--engine", "ray", str(tmp_path), timeout=300)
    assert p.returncode == 0, p.stderr.decode()[-2000:]
    (w,) = _warnings(p.stderr)
    assert str(cut) in w and "stopped reading" in w
