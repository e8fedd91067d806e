"""The progress bar: on stderr when it is a terminal (tested under a pseudo-terminal, the pty module),
for work longer than about a second; never on a pipe or with TERM=dumb; no colour under NO_COLOR."""

from __future__ import annotations

import os
import pty
import re
import select
import subprocess
import threading
import time

import pytest
from conftest import SAMPLES, crashlens_exe

_SGR_COLOUR = re.compile(rb"\x1b\[[0-9;]*(?:3[0-9]|9[0-7]|38;)[0-9;]*m")


def _run(args: list[str], env_extra: dict[str, str], slow_s: float, stderr_tty: bool = True) -> tuple[int, bytes, bytes]:
    """Run crashlens with stdin fed slowly for `slow_s` seconds (a crash, then quiet traffic), stderr on
    a pseudo-terminal (or a pipe); (exit code, stdout, what stderr showed)."""
    env = dict(os.environ)
    env.pop("NO_COLOR", None)
    env.update({"TERM": "xterm-256color", "COLUMNS": "120", **env_extra})
    if stderr_tty:
        master, slave = pty.openpty()
        err: int = slave
    else:
        master, slave, err = -1, -1, subprocess.PIPE  # type: ignore[assignment]
    p = subprocess.Popen(crashlens_exe() + args, stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=err, env=env)
    if slave >= 0:
        os.close(slave)
    crash = (SAMPLES / "raw" / "print-call.log").read_bytes()

    def feed() -> None:
        assert p.stdin is not None
        p.stdin.write(crash)
        end = time.monotonic() + slow_s
        n = 0
        while time.monotonic() < end:
            p.stdin.write(b"[2026-04-16 10:23:12] INFO: 10.0.0.1 - \"POST /generate HTTP/1.1\" 200 OK %d\n" % n)
            p.stdin.flush()
            n += 1
            time.sleep(0.05)
        p.stdin.close()

    t = threading.Thread(target=feed)
    t.start()
    shown = b""
    out = b""
    if master >= 0:
        while True:
            r, _, _ = select.select([master], [], [], 0.1)
            if r:
                try:
                    chunk = os.read(master, 65536)
                except OSError:
                    break
                if not chunk:
                    break
                shown += chunk
            elif p.poll() is not None:
                break
        os.close(master)
    t.join()
    assert p.stdout is not None
    out = p.stdout.read()
    if master < 0:
        assert p.stderr is not None
        shown = p.stderr.read()
    p.wait(timeout=60)
    return p.returncode, out, shown


@pytest.mark.parametrize("command", [["scan", "--no-audit", "-"], ["mine", "--all", "--format", "csv", "/dev/stdin"]])
def test_long_work_on_a_terminal_shows_a_bar(command):
    rc, out, shown = _run(command, {}, slow_s=2.5)
    assert rc in (0, 1)
    assert b"files" in shown and b"crashes" in shown, shown[-500:]
    assert b"scanning" in shown or b"mining" in shown
    assert b"print-call" in out or b"print()" in out, out[:500]  # the report is on stdout, whole
    assert b"\x1b" not in out


def test_no_bar_on_a_pipe_or_a_dumb_terminal():
    _, _, piped = _run(["scan", "--no-audit", "-"], {}, slow_s=1.6, stderr_tty=False)
    assert b"files" not in piped and b"\x1b" not in piped
    _, _, dumb = _run(["scan", "--no-audit", "-"], {"TERM": "dumb"}, slow_s=1.6)
    assert b"files" not in dumb and b"\x1b[" not in dumb


def test_short_work_shows_no_bar():
    _, _, shown = _run(["scan", "--no-audit", "-"], {}, slow_s=0.0)
    assert b"files" not in shown


def test_no_colour_with_no_color():
    _, _, coloured = _run(["scan", "--no-audit", "-"], {}, slow_s=2.0)
    assert _SGR_COLOUR.search(coloured), coloured[-300:]
    _, _, plain = _run(["scan", "--no-audit", "-"], {"NO_COLOR": "1"}, slow_s=2.0)
    assert b"files" in plain and not _SGR_COLOUR.search(plain)
