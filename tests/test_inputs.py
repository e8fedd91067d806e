"""What crashlens reads, and never writes over: FIFOs read once, compressed logs, ci's inputs and outputs."""

from __future__ import annotations

import bz2
import gzip
import json
import lzma
import os
import subprocess
import sys
import threading
from pathlib import Path

import pytest

from conftest import SAMPLES, assert_one_line_error, crashlens_exe, run_cli

# A real recording in SGLang framing (samples/README.md): one fatal crash, its signature known.
LOG = SAMPLES / "sglang-1rank-pcg-fp4.log"
SIGNATURE = "subprocess-thread-lock"
VLLM_LOG = SAMPLES / "vllm-tp2-fp4.log"

needs_fifo = pytest.mark.skipif(not hasattr(os, "mkfifo"), reason="no named pipes on this platform")


def _signatures(stdout: bytes) -> list[str]:
    return [d["signature"] for d in json.loads(stdout)["diagnoses"]]


class _Writer(threading.Thread):
    """Writes `data` into a FIFO the way a server writes its log: it dies (here: records) on EPIPE."""

    def __init__(self, fifo: Path, data: bytes) -> None:
        super().__init__(daemon=True)
        self.fifo, self.data = fifo, data
        self.written = 0
        self.error: str | None = None

    def run(self) -> None:
        try:
            with open(self.fifo, "wb", buffering=0) as fh:
                view = memoryview(self.data)
                while self.written < len(self.data):
                    self.written += fh.write(view[self.written:self.written + 4096]) or 0
        except OSError as e:  # BrokenPipeError: the reader closed its end early
            self.error = type(e).__name__


# --- FIFOs and devices: read once, as a stream, to the end -----------------------------------------------------------


@needs_fifo
@pytest.mark.parametrize("command", [["--format", "json", "--no-audit"], ["ci", "--format", "json"]])
def test_fifo_writer_gets_every_byte_read_and_the_crash_is_found(tmp_path: Path, command: list[str]) -> None:
    fifo = tmp_path / "server.log"
    os.mkfifo(fifo)
    data = LOG.read_bytes() * 3  # more than a pipe holds: the writer blocks until crashlens reads
    writer = _Writer(fifo, data)
    writer.start()
    p = run_cli(*command, str(fifo), timeout=30)
    writer.join(10)
    assert writer.error is None and writer.written == len(data)
    assert p.returncode == 1, p.stderr
    assert _signatures(p.stdout) == [SIGNATURE]
    regular = tmp_path / "regular.log"
    regular.write_bytes(data)
    want = run_cli(*command, str(regular))
    assert p.stdout.replace(b"server.log", b"regular.log") == want.stdout  # the same as the file on disk


@needs_fifo
def test_process_substitution_is_read_once(tmp_path: Path) -> None:
    """`crashlens <(zcat log.gz)`: the shell passes /dev/fd/N, a pipe that can be opened once."""
    exe = " ".join(f"'{x}'" for x in crashlens_exe())
    p = subprocess.run(["bash", "-c", f"{exe} --format json --no-audit <(cat '{LOG}'); echo \"rc=$?\" >&2"],
                       capture_output=True, timeout=30)
    assert b"rc=1" in p.stderr, p.stderr
    assert _signatures(p.stdout) == [SIGNATURE]


@needs_fifo
def test_watch_reads_a_fifo_as_a_stream_to_its_end(tmp_path: Path) -> None:
    """`watch` on a FIFO: no byte lost to the writer, and the watch ends (as for stdin) when the writer closes."""
    fifo = tmp_path / "server.log"
    os.mkfifo(fifo)
    data = (SAMPLES / "sglang-8rank-pcg-fp4.log").read_bytes()
    writer = _Writer(fifo, data)
    writer.start()
    p = run_cli("watch", "--format", "json", "--no-audit", str(fifo), timeout=30)
    writer.join(10)
    assert writer.error is None and writer.written == len(data)
    assert p.returncode == 1, p.stderr
    doc = json.loads(p.stdout)
    want = json.loads(run_cli("--format", "json", "--no-audit", str(SAMPLES / "sglang-8rank-pcg-fp4.log")).stdout)
    assert [(d["id"], len(d["occurrences"])) for d in doc["diagnoses"]] == [
        (d["id"], len(d["occurrences"])) for d in want["diagnoses"]]


def test_character_device_is_read_as_a_stream() -> None:
    if not os.path.exists("/dev/null"):
        pytest.skip("no /dev/null")
    p = run_cli("--format", "json", "/dev/null", timeout=30)
    assert p.returncode == 0, p.stderr
    assert json.loads(p.stdout)["diagnoses"] == []


@needs_fifo
def test_ci_on_a_folder_holding_a_fifo_ends_and_reads_only_log_files(tmp_path: Path) -> None:
    art = tmp_path / "artifacts"
    art.mkdir()
    (art / "server.log").write_bytes(LOG.read_bytes())
    os.mkfifo(art / "stream.log")  # a log name, but no regular file: nobody will ever write to it
    os.mkfifo(art / "pipe")
    (art / "core").write_bytes(b"\x7fELF\x02\x01\x01" + bytes(5000))  # no extension: not a log
    (art / "model.bin").write_bytes(bytes(100))
    p = run_cli("ci", str(art), "--format", "json", timeout=30)
    assert p.returncode == 1, p.stderr
    doc = json.loads(p.stdout)
    assert [s["name"] for s in doc["sources"]] == [str(art / "server.log")]
    assert _signatures(p.stdout) == [SIGNATURE]
    p = run_cli("ci", str(art / "*"), "--format", "json", timeout=30)  # a glob takes regular files only
    assert p.returncode == 1, p.stderr
    assert str(art / "stream.log") not in {s["name"] for s in json.loads(p.stdout)["sources"]}


def test_ci_walk_reads_the_documented_names(tmp_path: Path) -> None:
    art = tmp_path / "a"
    names = ["server.log", "w.txt", "job.out", "job.err", "r.stdout", "r.stderr", "server.log.1", "server.log-20250101",
             "old.log.gz", "old.log.xz", "old.log.bz2"]
    ignored = ["README", "notes.md", "model.bin", "server", ".hidden.log"]
    art.mkdir()
    text = LOG.read_bytes()
    for n in names + ignored:
        data = gzip.compress(text) if n.endswith(".gz") else lzma.compress(text) if n.endswith(".xz") else (
            bz2.compress(text) if n.endswith(".bz2") else text)
        (art / n).write_bytes(data)
    p = run_cli("ci", str(art), "--format", "json", timeout=60)
    assert p.returncode == 1, p.stderr
    doc = json.loads(p.stdout)
    assert sorted(Path(s["name"]).name for s in doc["sources"]) == sorted(names)
    assert {Path(o["source"]).name for o in doc["diagnoses"][0]["occurrences"]} == set(names)


# --- ci never writes over what it reads ------------------------------------------------------------------------------


def _artifacts(tmp_path: Path) -> Path:
    art = tmp_path / "logs"
    art.mkdir()
    (art / "server.log").write_bytes(LOG.read_bytes())
    (art / "x.log").write_bytes(VLLM_LOG.read_bytes())
    return art


@pytest.mark.parametrize("how", ["directory", "glob", "named", "symlink", "hard link"])
def test_ci_refuses_an_output_that_is_an_input(tmp_path: Path, how: str, monkeypatch: pytest.MonkeyPatch) -> None:
    art = _artifacts(tmp_path)
    before = {p.name: p.read_bytes() for p in art.iterdir()}
    out = str(art / "x.log")
    if how == "symlink":
        os.symlink(art / "x.log", tmp_path / "report.sarif")
        out = str(tmp_path / "report.sarif")
    if how == "hard link":
        os.link(art / "x.log", tmp_path / "report.sarif")
        out = str(tmp_path / "report.sarif")
    arg = {"directory": str(art), "glob": str(art / "*.log"), "named": str(art / "x.log"),
           "symlink": str(art), "hard link": str(art)}[how]
    p = run_cli("ci", arg, "-f", "sarif", "-o", out)
    assert_one_line_error(p, 2, "--output", "input")
    assert {p.name: p.read_bytes() for p in art.iterdir()} == before


FORMATS = ["github", "markdown", "sarif", "junit", "gitlab", "json"]


@pytest.mark.parametrize("fmt", FORMATS)
@pytest.mark.parametrize("crash", [True, False])
def test_reports_written_earlier_are_never_read_back(tmp_path: Path, fmt: str, crash: bool) -> None:
    art = tmp_path / "logs"
    art.mkdir()
    (art / "server.log").write_bytes(LOG.read_bytes() if crash else b"INFO server started\nINFO 200 OK\n")
    report = art / "summary.txt"  # a log name, inside the folder being read
    for _ in range(2):  # the re-run writes over its own earlier report, and does not read it
        p = run_cli("ci", str(art), "-f", fmt, "-o", str(report), "-f", "json")
        assert p.returncode == (1 if crash else 0), p.stderr
        assert [s["name"] for s in json.loads(p.stdout)["sources"]] == [str(art / "server.log")]
    # Another run, another output name: the first report is still not an artifact.
    p = run_cli("ci", str(art), "-f", "json")
    assert [s["name"] for s in json.loads(p.stdout)["sources"]] == [str(art / "server.log")]
    assert len(json.loads(p.stdout)["diagnoses"]) == (1 if crash else 0)


# --- compressed logs -------------------------------------------------------------------------------------------------


def _cut_gz(path: Path) -> Path:
    data = gzip.compress(LOG.read_bytes() + b"INFO after\n" * 4000)
    path.write_bytes(data[: len(data) - 40])  # the end of the stream is lost
    return path


@pytest.mark.parametrize("command", [[], ["ci"]])
def test_truncated_gz_is_read_up_to_the_cut_with_a_warning_and_the_normal_exit_code(tmp_path: Path,
                                                                                    command: list[str]) -> None:
    cut = _cut_gz(tmp_path / "killed-job.log.gz")
    p = run_cli(*command, "--format", "json", str(cut))
    assert p.returncode == 1, p.stderr
    assert _signatures(p.stdout) == [SIGNATURE]
    err = p.stderr.decode()
    assert "Traceback" not in err and err.count("\n") == 1
    assert err.startswith("crashlens: warning: ") and str(cut) in err


@pytest.mark.parametrize("command", [[], ["ci"]])
def test_gz_that_is_not_gzip_is_one_line_naming_the_file(tmp_path: Path, command: list[str]) -> None:
    bad = tmp_path / "server.log.gz"
    bad.write_bytes(LOG.read_bytes())
    assert_one_line_error(run_cli(*command, str(bad)), 2, str(bad), "gzip")


@pytest.mark.parametrize("compress, suffix", [(gzip.compress, ".gz"), (lzma.compress, ".xz"), (bz2.compress, ".bz2")])
def test_compressed_logs_are_decompressed_never_read_as_text(tmp_path: Path, compress, suffix: str) -> None:
    data = compress(LOG.read_bytes())
    for name in ("server.log" + suffix, "server.log.1"):  # by the extension, or by the first bytes
        path = tmp_path / name
        path.write_bytes(data)
        p = run_cli("--format", "json", str(path))
        assert p.returncode == 1, p.stderr
        assert _signatures(p.stdout) == [SIGNATURE]
    p = run_cli("--format", "json", "-", stdin=data)
    assert p.returncode == 1 and _signatures(p.stdout) == [SIGNATURE]


def test_zstd_is_read_where_python_can_else_refused_in_one_line(tmp_path: Path) -> None:
    path = tmp_path / "server.log.zst"
    if sys.version_info >= (3, 14):
        from compression import zstd  # type: ignore[import-not-found]

        path.write_bytes(zstd.compress(LOG.read_bytes()))
        p = run_cli("--format", "json", str(path))
        assert p.returncode == 1 and _signatures(p.stdout) == [SIGNATURE]
    else:
        path.write_bytes(b"\x28\xb5\x2f\xfd" + bytes(64))
        assert_one_line_error(run_cli(str(path)), 2, str(path), "zstd", "3.14")
        assert_one_line_error(run_cli("ci", str(path)), 2, str(path), "zstd")


@needs_fifo
def test_compressed_stream_is_decompressed_and_read_once(tmp_path: Path) -> None:
    """`crashlens <(cat server.log.gz)`: a FIFO whose bytes are gzip, read once (never replayed)."""
    fifo = tmp_path / "stream"
    os.mkfifo(fifo)
    data = gzip.compress(LOG.read_bytes())
    writer = _Writer(fifo, data)
    writer.start()
    p = run_cli("--format", "json", "--no-audit", str(fifo), timeout=30)
    writer.join(10)
    assert writer.error is None and writer.written == len(data)
    assert p.returncode == 1, p.stderr
    assert _signatures(p.stdout) == [SIGNATURE]


def test_watch_refuses_a_compressed_file_in_one_line(tmp_path: Path) -> None:
    path = tmp_path / "server.log.gz"
    path.write_bytes(gzip.compress(LOG.read_bytes()))
    assert_one_line_error(run_cli("watch", str(path), timeout=30), 2, str(path), "compressed")


@needs_fifo
def test_fifo_among_several_files_is_read_once(tmp_path: Path) -> None:
    fifo = tmp_path / "live.log"
    os.mkfifo(fifo)
    writer = _Writer(fifo, LOG.read_bytes())
    writer.start()
    p = run_cli("--format", "json", "--no-audit", "-j", "2", str(VLLM_LOG), str(fifo), timeout=30)
    writer.join(10)
    assert writer.error is None and writer.written == len(LOG.read_bytes())
    assert [s["name"] for s in json.loads(p.stdout)["sources"]] == [str(VLLM_LOG), str(fifo)]
    assert {o["source"] for d in json.loads(p.stdout)["diagnoses"] for o in d["occurrences"]} == {
        str(VLLM_LOG), str(fifo)}
