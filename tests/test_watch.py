"""`crashlens watch` and `crashlens --follow` on live files and real pipes: each crash once, no line lost."""

from __future__ import annotations

import json
import os
import queue
import shutil
import signal
import subprocess
import sys
import threading
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from crashlens.catalog import get_catalog
from crashlens.follow import Idle, follow
from crashlens.pipeline import scan_lines
from crashlens.read import decode_line

ROOT = Path(__file__).resolve().parent.parent
CRASHLENS = Path(sys.executable).parent / "crashlens"
QUIET = 0.4  # --quiet-period used by these tests (generous: a loaded CI machine must not split a write)
TIMEOUT = 10.0  # seconds to wait for something that should come at once

pytestmark = pytest.mark.skipif(not Path("/proc/self/fd").is_dir(), reason="needs /proc to see the watcher is ready")


# -- real crashes ------------------------------------------------------------------------------------------
def _fatal_id(text: str) -> str | None:
    _, diags = scan_lines("sample", text.splitlines(), get_catalog([]))
    return diags[0].id if len(diags) == 1 and diags[0].fatal else None


def _recorded() -> list[tuple[str, str]]:
    """(log text, diagnosis id) of real recorded crashes with distinct ids: samples/raw, else signature examples."""
    texts = [p.read_text(encoding="utf-8") for p in sorted((ROOT / "samples" / "raw").glob("*.log"))]
    if len(texts) < 3:
        try:
            import tomllib
        except ImportError:  # Python 3.10
            import tomli as tomllib  # type: ignore[no-redef]
        for sig in sorted((ROOT / "signatures").glob("*.toml")):
            for ex in tomllib.loads(sig.read_text(encoding="utf-8")).get("examples", []):
                if ex.get("expect") == "match":
                    texts.append(ex["text"].lstrip("\n"))
    out: dict[str, str] = {}
    for text in texts:
        if not text.endswith("\n"):
            text += "\n"
        i = _fatal_id(text)
        if i is not None and i not in out:
            out[i] = text
            if len(out) == 3:
                break
    return [(t, i) for i, t in out.items()]


CRASHES = _recorded()
if len(CRASHES) < 3:
    pytest.skip("need three recorded crashes (samples/raw/*.log or signature examples)", allow_module_level=True)
(A, A_ID), (B, B_ID), (C, C_ID) = CRASHES[:3]


def _lines(*texts: str | bytes) -> list[str]:
    """The text lines crashlens reads from these bytes: split at newlines only, tqdm redraws reduced."""
    data = b"".join(t.encode() if isinstance(t, str) else t for t in texts)
    parts = data.split(b"\n")
    return [decode_line(p) for p in parts[:-1]] + ([decode_line(parts[-1])] if parts[-1] else [])


# -- a watcher subprocess and an in-process follower on the same files ---------------------------------------
class _Pipe:
    def __init__(self, stream: object) -> None:
        self.q: queue.Queue[bytes] = queue.Queue()
        self.seen: list[bytes] = []
        threading.Thread(target=self._pump, args=(stream,), daemon=True).start()

    def _pump(self, stream: object) -> None:
        for line in stream:  # type: ignore[attr-defined]
            self.q.put(line)

    def wait_for(self, pred: object, timeout: float = TIMEOUT) -> bytes:
        deadline = time.monotonic() + timeout
        while True:
            left = deadline - time.monotonic()
            if left <= 0:
                raise AssertionError(f"timed out; seen so far: {self.seen!r}")
            try:
                line = self.q.get(timeout=left)
            except queue.Empty:
                continue
            self.seen.append(line)
            if pred(line):  # type: ignore[operator]
                return line

    def drain(self, wait: float) -> list[bytes]:
        time.sleep(wait)
        while True:
            try:
                self.seen.append(self.q.get_nowait())
            except queue.Empty:
                return self.seen


class Watch:
    """`crashlens watch FILES --format jsonl` as a subprocess, plus follow() in-process on the same files."""

    def __init__(self, paths: list[Path], *extra: str) -> None:
        self.paths = paths
        self.proc = subprocess.Popen(
            [str(CRASHLENS), "watch", *map(str, paths), "--format", "jsonl", "--no-audit",
             "--quiet-period", str(QUIET), *extra],
            stdout=subprocess.PIPE, stderr=subprocess.PIPE)
        self.out = _Pipe(self.proc.stdout)
        self.err = _Pipe(self.proc.stderr)
        self.lines: dict[str, list[str]] = {str(p): [] for p in paths}
        self._stop = threading.Event()
        self._ready = threading.Event()
        self._thread = threading.Thread(target=self._follow, args=("--from-start" in extra,), daemon=True)
        self._thread.start()

    def _follow(self, from_start: bool) -> None:
        for item in follow([str(p) for p in self.paths], from_start=from_start, quiet_period=QUIET):
            if isinstance(item, Idle):
                self._ready.set()
                if self._stop.is_set():
                    return
                continue
            self.lines[item[0]].append(item[1])

    def ready(self) -> Watch:
        """Both have opened every file that exists (so 'start at the end' means the end as of now)."""
        assert self._ready.wait(TIMEOUT)
        _wait_open(self.proc, [p for p in self.paths if p.exists()])
        return self

    def read_through(self, path: Path, text: str) -> None:
        """Wait until the in-process follower has read `text` from `path`: only then may a test destroy
        it (truncate, delete); content written and removed between two polls cannot be read by anyone."""
        want = len(_lines(text))
        deadline = time.monotonic() + TIMEOUT
        while len(self.lines[str(path)]) < want and time.monotonic() < deadline:
            time.sleep(0.01)
        assert len(self.lines[str(path)]) >= want, "the follower did not read the file"

    def diagnosis(self) -> dict[str, object]:
        line = self.out.wait_for(lambda b: b.strip() != b"")
        doc = json.loads(line)
        assert doc["schema"] == "crashlens/v1"
        return doc["diagnosis"]  # type: ignore[no-any-return]

    def close(self, expect_ids: list[str] | set[str] | tuple[str, ...], expect_lines: dict[Path, list[str]]) -> None:
        """Every crash reported exactly once (in this order, for a list), and every written line read, in order."""
        time.sleep(QUIET + 0.1)  # anything late (a duplicate, a quiet-period flush) has had its chance
        self._stop.set()
        self._thread.join(TIMEOUT)
        self.proc.kill()
        self.proc.wait()
        reported = [json.loads(b)["diagnosis"]["id"] for b in self.out.drain(0) if b.strip()]
        if isinstance(expect_ids, (set, tuple)):  # a tuple: these reports, in any order
            assert sorted(reported) == sorted(expect_ids)
        else:
            assert reported == expect_ids
        for p, want in expect_lines.items():
            assert "\n".join(self.lines[str(p)]).encode() == "\n".join(want).encode()


def _wait_open(proc: subprocess.Popen[bytes], paths: list[Path]) -> None:
    """Wait until the process holds every one of paths open."""
    wanted = {os.path.realpath(p) for p in paths}
    deadline = time.monotonic() + TIMEOUT
    while time.monotonic() < deadline:
        try:
            held = {os.readlink(fd) for fd in Path(f"/proc/{proc.pid}/fd").iterdir()}
        except OSError:  # a descriptor closed while we looked
            held = set()
        if wanted <= held:
            return
        assert proc.poll() is None, "watcher exited"
        time.sleep(0.01)
    raise AssertionError("watcher did not open its files")


@pytest.fixture
def watches() -> Iterator[list[Watch]]:
    made: list[Watch] = []
    yield made
    for w in made:  # always kill the watcher, whatever the test did
        w._stop.set()
        if w.proc.poll() is None:
            w.proc.kill()
            w.proc.wait()


def _watch(made: list[Watch], paths: list[Path], *extra: str) -> Watch:
    w = Watch(paths, *extra)
    made.append(w)
    return w.ready()


def _append(path: Path, text: str) -> None:
    """Like a process printing its traceback: line by line, each line written as it is printed."""
    fd = os.open(path, os.O_WRONLY | os.O_APPEND | os.O_CREAT, 0o644)
    try:
        for line in text.splitlines(keepends=True):
            os.write(fd, line.encode())
    finally:
        os.close(fd)


# -- files ---------------------------------------------------------------------------------------------------
def test_append_starts_at_end_and_reports_each_crash_once(tmp_path: Path, watches: list[Watch]) -> None:
    log = tmp_path / "server.log"
    log.write_text(C)  # already there when watching starts: not reported
    w = _watch(watches, [log])
    _append(log, A)
    assert w.diagnosis()["id"] == A_ID
    _append(log, B)
    assert w.diagnosis()["id"] == B_ID
    _append(log, A)  # the same crash again: counted, not printed again
    w.close([A_ID, B_ID], {log: _lines(A, B, A)})


def test_from_start_reads_the_file_whole_first(tmp_path: Path, watches: list[Watch]) -> None:
    log = tmp_path / "server.log"
    log.write_text(A + B)
    w = _watch(watches, [log], "--from-start")
    assert {w.diagnosis()["id"], w.diagnosis()["id"]} == {A_ID, B_ID}
    _append(log, C)
    assert w.diagnosis()["id"] == C_ID
    w.close([A_ID, B_ID, C_ID], {log: _lines(A, B, C)})


def test_rotation_by_rename(tmp_path: Path, watches: list[Watch]) -> None:
    log = tmp_path / "server.log"
    log.touch()
    w = _watch(watches, [log])
    writer = os.open(log, os.O_WRONLY | os.O_APPEND)  # the server's log handle
    try:
        os.write(writer, A.encode())
        assert w.diagnosis()["id"] == A_ID
        log.rename(tmp_path / "server.log.1")  # logrotate; the server has not reopened yet
        w.err.wait_for(lambda b: b"inaccessible" in b)
        time.sleep(0.3)  # several polls later, the server still writes the old file
        os.write(writer, C.encode())
        assert w.diagnosis()["id"] == C_ID  # written to the rotated file: still read
        log.touch()
        _append(log, B)  # the server reopened its log
        assert w.diagnosis()["id"] == B_ID
    finally:
        os.close(writer)
    w.close([A_ID, C_ID, B_ID], {log: _lines(A, C, B)})


@pytest.mark.parametrize("append_mode", [True, False], ids=["o_append", "plain_offset"])
def test_copy_truncate(tmp_path: Path, watches: list[Watch], append_mode: bool) -> None:
    log = tmp_path / "server.log"
    log.touch()
    w = _watch(watches, [log])
    flags = os.O_WRONLY | (os.O_APPEND if append_mode else 0)
    writer = os.open(log, flags)
    try:
        os.write(writer, A.encode())
        assert w.diagnosis()["id"] == A_ID
        w.read_through(log, A)
        shutil.copyfile(log, tmp_path / "server.log.1")
        os.truncate(log, 0)
        # Without O_APPEND the writer goes on at its old offset: the file is NULs up to there, then text.
        os.write(writer, B.encode())
        assert w.diagnosis()["id"] == B_ID
    finally:
        os.close(writer)
    w.close([A_ID, B_ID], {log: _lines(A, B)})


def test_truncated_then_grown_past_old_size_before_next_poll(tmp_path: Path, watches: list[Watch]) -> None:
    log = tmp_path / "server.log"
    log.touch()
    w = _watch(watches, [log])
    _append(log, A)
    assert w.diagnosis()["id"] == A_ID
    assert len(B + C) > len(A)  # GNU tail would resume at the old offset, in the middle of B
    w.read_through(log, A)
    with open(log, "r+b") as f:  # one truncate and one write: both land between two polls
        f.truncate(0)
        f.write((B + C).encode())
    assert {w.diagnosis()["id"], w.diagnosis()["id"]} == {B_ID, C_ID}
    w.close([A_ID, B_ID, C_ID], {log: _lines(A, B, C)})


def test_deleted_and_recreated(tmp_path: Path, watches: list[Watch]) -> None:
    log = tmp_path / "server.log"
    log.touch()
    w = _watch(watches, [log])
    _append(log, A)
    assert w.diagnosis()["id"] == A_ID
    w.read_through(log, A)
    log.unlink()
    w.err.wait_for(lambda b: b"inaccessible" in b)
    _append(log, B)
    w.err.wait_for(lambda b: b"has appeared" in b)
    assert w.diagnosis()["id"] == B_ID
    w.close([A_ID, B_ID], {log: _lines(A, B)})


def test_file_that_does_not_exist_yet(tmp_path: Path, watches: list[Watch]) -> None:
    log = tmp_path / "later" / "server.log"
    w = _watch(watches, [log])
    w.err.wait_for(lambda b: b"does not exist yet" in b)
    log.parent.mkdir()
    _append(log, A)  # a new file is read from its start
    assert w.diagnosis()["id"] == A_ID
    w.close([A_ID], {log: _lines(A)})


def test_same_crash_in_two_files_is_reported_once(tmp_path: Path, watches: list[Watch]) -> None:
    rank0, rank1 = tmp_path / "rank0.log", tmp_path / "rank1.log"
    rank0.touch()
    rank1.touch()
    w = _watch(watches, [rank0, rank1])
    _append(rank0, A)
    assert w.diagnosis()["id"] == A_ID
    _append(rank1, A)
    _append(rank1, B)
    assert w.diagnosis()["id"] == B_ID
    w.close([A_ID, B_ID], {rank0: _lines(A), rank1: _lines(A, B)})


def test_complete_traceback_does_not_wait_for_the_quiet_period(tmp_path: Path, watches: list[Watch]) -> None:
    # The trailer (or a plain traceback's exception line) ends the crash: no need to wait for quiet.
    log = tmp_path / "server.log"
    log.touch()
    w = _watch(watches, [log], "--quiet-period", "5")
    t0 = time.monotonic()
    _append(log, A)
    assert w.diagnosis()["id"] == A_ID
    assert time.monotonic() - t0 < 2.0
    w.close([A_ID], {log: _lines(A)})


def test_cut_off_traceback_is_reported_after_the_quiet_period(tmp_path: Path, watches: list[Watch]) -> None:
    # The process died before printing the dynamo trailer: no line will ever end the record.
    cut = "".join(ln for ln in A.splitlines(keepends=True) if not ln.startswith("Set TORCH"))
    cut = cut.rstrip("\n") + "\n"
    log = tmp_path / "server.log"
    log.touch()
    w = _watch(watches, [log])
    t0 = time.monotonic()
    _append(log, cut)
    d = w.diagnosis()
    assert time.monotonic() - t0 >= QUIET
    assert d["fatal"] is True
    w.close([d["id"]], {log: _lines(cut)})  # type: ignore[list-item]


def test_ranks_crashing_together_are_reported_once(tmp_path: Path, watches: list[Watch]) -> None:
    """A multi-rank server log written live, in bursts: the same distinct crashes as a scan of it finds."""
    framed = [p for p in sorted((ROOT / "samples").glob("*.log")) if "rank" in p.name or "tp" in p.name]
    if not framed:
        pytest.skip("no framed multi-rank samples")
    biggest = max(framed, key=lambda p: p.stat().st_size)  # the most ranks
    src = tmp_path / biggest.name
    shutil.copyfile(biggest, src)
    scanned = subprocess.run([str(CRASHLENS), str(src), "--format", "json", "--no-audit"], capture_output=True,
                             check=False)
    want = {d["id"] for d in json.loads(scanned.stdout)["diagnoses"]}
    log = tmp_path / "server.log"
    log.touch()
    w = _watch(watches, [log])
    lines = src.read_bytes().splitlines(keepends=True)
    for i in range(0, len(lines), 40):  # ranks' lines interleaved, as the server wrote them
        _append(log, b"".join(lines[i : i + 40]).decode())
        time.sleep(0.02)
    for _ in want:
        w.diagnosis()
    w.close(want, {log: _lines(src.read_bytes())})


def test_from_start_matches_scan(tmp_path: Path, watches: list[Watch]) -> None:
    """Watching whole recordings finds the same distinct crashes as scanning them."""
    found = sorted((ROOT / "samples").glob("*.log")) + sorted((ROOT / "samples" / "raw").glob("*.log"))
    if not found:
        pytest.skip("no recorded samples")
    logs = []
    for i, src in enumerate(found[:12]):  # copies: the recordings must not change under the test
        logs.append(tmp_path / f"{i:02d}-{src.name}")
        shutil.copyfile(src, logs[-1])
    scanned = subprocess.run([str(CRASHLENS), *map(str, logs), "--format", "json", "--no-audit"],
                             capture_output=True, check=False)
    # One report per distinct crash, and one more for each later round it comes back in (a restarts log).
    want = tuple(d["id"] for d in json.loads(scanned.stdout)["diagnoses"] for _ in {o["round"] for o in d["occurrences"]})
    w = _watch(watches, logs, "--from-start")
    for _ in want:
        w.diagnosis()
    w.close(want, {p: _lines(p.read_bytes()) for p in logs})


def test_ctrl_c_exits_130_without_traceback(tmp_path: Path, watches: list[Watch]) -> None:
    log = tmp_path / "server.log"
    log.touch()
    w = _watch(watches, [log])
    w.proc.send_signal(signal.SIGINT)
    assert w.proc.wait(TIMEOUT) == 130
    err = b"".join(w.err.drain(0.2))
    assert b"Traceback" not in err and b"interrupted" in err


@pytest.mark.parametrize("no_color", [False, True], ids=["tty", "tty-NO_COLOR"])
def test_terminal_shows_each_crash_once_with_a_live_status_line(tmp_path: Path, no_color: bool) -> None:
    import pty
    import select

    log = tmp_path / "server.log"
    log.touch()
    env = {k: v for k, v in os.environ.items() if k != "NO_COLOR"} | {"COLUMNS": "120", "LINES": "40"}
    if no_color:
        env["NO_COLOR"] = "1"
    master, slave = pty.openpty()
    proc = subprocess.Popen([str(CRASHLENS), "watch", str(log), "--no-audit", "--quiet-period", str(QUIET)],
                            stdin=subprocess.DEVNULL, stdout=slave, stderr=slave, env=env)
    os.close(slave)
    screen = bytearray()

    def read_until(marker: bytes, timeout: float = TIMEOUT) -> None:
        deadline = time.monotonic() + timeout
        while marker not in screen and time.monotonic() < deadline:
            if select.select([master], [], [], 0.05)[0]:
                try:
                    screen.extend(os.read(master, 65536))
                except OSError:
                    return

    try:
        _wait_open(proc, [log])
        _append(log, A)
        read_until(f"id {A_ID}".encode())
        _append(log, A)  # a second copy: counted on the status line, no second panel
        read_until(b"seen 2x", timeout=TIMEOUT if not no_color else QUIET + 0.5)  # NO_COLOR: no status line

        proc.send_signal(signal.SIGINT)
        read_until(b"interrupted")
        assert proc.wait(TIMEOUT) == 130
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()
        os.close(master)
    assert screen.count(f"id {A_ID}".encode()) == 1
    if no_color:
        assert b"\x1b" not in screen and b"watching" not in screen
    else:
        assert b"watching" in screen and b"seen 2x" in screen


# -- pipes ---------------------------------------------------------------------------------------------------
_WRITER = r"""
import os, sys, time
first, rest, gate = sys.argv[1], sys.argv[2], sys.argv[3]
out = sys.stdout.buffer
for path in (first, rest):
    data = open(path, "rb").read()
    for line in data.splitlines(keepends=True):
        out.write(line)
        out.flush()
    if path == first:
        deadline = time.monotonic() + 20
        while not os.path.exists(gate) and time.monotonic() < deadline:
            time.sleep(0.01)
"""


def _piped(tmp_path: Path, args: list[str], first: bytes, rest: bytes) -> tuple[subprocess.Popen[bytes],
                                                                                  subprocess.Popen[bytes], Path]:
    """A writer process whose stdout is piped into crashlens; it writes `first`, waits for the gate, then `rest`."""
    (tmp_path / "first.bin").write_bytes(first)
    (tmp_path / "rest.bin").write_bytes(rest)
    gate = tmp_path / "gate"
    writer = subprocess.Popen([sys.executable, "-c", _WRITER, str(tmp_path / "first.bin"),
                               str(tmp_path / "rest.bin"), str(gate)], stdout=subprocess.PIPE)
    cl = subprocess.Popen([str(CRASHLENS), *args], stdin=writer.stdout, stdout=subprocess.PIPE,
                          stderr=subprocess.PIPE)
    assert writer.stdout is not None
    writer.stdout.close()  # crashlens holds the read end now
    return writer, cl, gate


def _kill(*procs: subprocess.Popen[bytes]) -> None:
    for p in procs:
        if p.poll() is None:
            p.kill()
        p.wait()


@pytest.mark.parametrize("args", [["--follow"], ["watch", "-"]], ids=["--follow", "watch -"])
def test_pipe_passes_through_and_diagnoses_as_crashes_complete(tmp_path: Path, args: list[str]) -> None:
    # Real log bytes, plus what pipes carry: CRLF lines, bytes that are not UTF-8, no final newline.
    first = A.encode()
    rest = (B.replace("\n", "\r\n") + A + "tqdm 10%\r tqdm 90%\r\xff-not-utf8\n").encode("utf-8", "surrogateescape")
    rest += b"\xff\xfe raw bytes\n" + C.encode() + b"last line without newline"
    writer, cl, gate = _piped(tmp_path, [*args, "--format", "jsonl", "--no-audit"], first, rest)
    try:
        out, err = _Pipe(cl.stdout), _Pipe(cl.stderr)
        # The first crash is reported while the writer is still running (it waits for the gate).
        line = err.wait_for(lambda b: b.startswith(b"{"))
        assert json.loads(line)["diagnosis"]["id"] == A_ID
        assert writer.poll() is None
        gate.touch()
        assert cl.wait(TIMEOUT) == 1  # a fatal crash was seen
        assert writer.wait(TIMEOUT) == 0
        assert b"".join(out.drain(0.1)) == first + rest  # every byte through, unchanged
        ids = [json.loads(b)["diagnosis"]["id"] for b in err.drain(0) if b.startswith(b"{")]
        assert ids == [A_ID, B_ID, C_ID]
    finally:
        _kill(writer, cl)


def test_pipe_without_crash_exits_0(tmp_path: Path) -> None:
    quiet = "".join(ln for ln in A.splitlines(keepends=True) if ln.startswith("#")) or "server started\n"
    writer, cl, gate = _piped(tmp_path, ["--follow", "--no-audit"], quiet.encode(), b"")
    try:
        gate.touch()
        out, err = cl.communicate(timeout=TIMEOUT)
        assert cl.returncode == 0
        assert out == quiet.encode()
        assert err == b""
    finally:
        _kill(writer, cl)


def test_exec_runs_once_per_crash_and_failures_do_not_stop_watching(tmp_path: Path) -> None:
    hook = tmp_path / "page.py"
    calls = tmp_path / "calls"
    calls.mkdir()
    hook.write_text(
        "import json, sys, pathlib\n"
        "doc = json.load(sys.stdin)\n"
        f"pathlib.Path({str(calls)!r}, doc['diagnosis']['id']).write_text(json.dumps(doc))\n")
    # Log text must never reach the command line: the diagnosis travels on stdin only.
    writer, cl, gate = _piped(tmp_path, ["watch", "-", "--no-audit", "--format", "jsonl",
                                         "--exec", f"{sys.executable} {hook}"], A.encode(), (B + A).encode())
    try:
        gate.touch()
        assert cl.wait(TIMEOUT) == 1
        assert sorted(p.name for p in calls.iterdir()) == sorted([A_ID, B_ID])
        doc = json.loads((calls / A_ID).read_text())
        assert doc["schema"] == "crashlens/v1" and doc["diagnosis"]["id"] == A_ID
    finally:
        _kill(writer, cl)

    writer, cl, gate = _piped(tmp_path, ["watch", "-", "--no-audit", "--format", "jsonl",
                                         "--exec", "no-such-command-crashlens-test --page"], A.encode(), B.encode())
    try:
        gate.touch()
        out, err = cl.communicate(timeout=TIMEOUT)
        assert cl.returncode == 1
        assert out == (A + B).encode()
        assert err.count(b"--exec") == 1 and b"no-such-command-crashlens-test" in err
        ids = [json.loads(b)["diagnosis"]["id"] for b in err.splitlines() if b.startswith(b"{")]
        assert ids == [A_ID, B_ID]
    finally:
        _kill(writer, cl)
