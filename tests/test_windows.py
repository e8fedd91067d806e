"""Where os.pread is missing (Windows) and select() takes sockets only, scan and watch still work. Simulated
here by removing os.pread and making select() refuse a pipe, as Windows does (WinError 10038)."""

from __future__ import annotations

import io
import json
import os
import select
import sys
import threading
from pathlib import Path

import pytest

from conftest import SAMPLES
from crashlens.cli import main
from crashlens.follow import Idle, follow

LOG = SAMPLES / "sglang-1rank-pcg-fp4.log"


@pytest.fixture
def windows(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delattr(os, "pread", raising=False)
    monkeypatch.delattr(os, "preadv", raising=False)

    def socket_only(rlist, *args, **kwargs):
        raise OSError(10038, "An operation was attempted on something that is not a socket")

    monkeypatch.setattr(select, "select", socket_only)


def _run(capfd: pytest.CaptureFixture[str], *args: str) -> tuple[int, str, str]:
    with pytest.raises(SystemExit) as e:
        main(list(args))
    out, err = capfd.readouterr()
    return int(e.value.code or 0), out, err


def test_scan_without_pread(windows, capfd: pytest.CaptureFixture[str]) -> None:
    rc, out, err = _run(capfd, "--format", "json", str(LOG))
    assert rc == 1, err
    assert json.loads(out)["diagnoses"][0]["signature"] == "subprocess-thread-lock"


def test_following_a_file_without_pread(windows, tmp_path: Path) -> None:
    log = tmp_path / "server.log"
    lines = LOG.read_text(encoding="utf-8").splitlines(keepends=True)
    log.write_text("".join(lines[:10]), encoding="utf-8")
    got: list[str] = []
    it = follow([str(log)], from_start=True, min_interval=0.01, max_interval=0.02)
    appended = False
    for item in it:
        if isinstance(item, Idle):
            if len(got) >= 10 and not appended:
                with open(log, "a", encoding="utf-8") as fh:  # the server writes on
                    fh.write("".join(lines[10:40]))
                appended = True
            elif appended and len(got) >= 40:
                break
            continue
        got.append(item[1])
    it.close()
    assert got == [ln.rstrip("\n") for ln in lines[:40]]


def test_watch_a_pipe_where_select_takes_sockets_only(windows, monkeypatch: pytest.MonkeyPatch,
                                                      capfd: pytest.CaptureFixture[str]) -> None:
    r, w = os.pipe()
    data = LOG.read_bytes()
    writer = threading.Thread(target=lambda: (os.write(w, data), os.close(w)))
    writer.start()
    monkeypatch.setattr(sys, "stdin", io.TextIOWrapper(io.FileIO(r, "rb")))
    rc, out, err = _run(capfd, "watch", "-", "--format", "json")
    writer.join()
    assert rc == 1 and "Traceback" not in err
    assert out.encode() == data  # passed through
    assert json.loads(err)["diagnoses"][0]["signature"] == "subprocess-thread-lock"
