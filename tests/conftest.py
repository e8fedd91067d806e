"""Shared test helpers: where the samples and the shared corpus are, and how to run the installed CLI."""

from __future__ import annotations

import os
import shutil
import signal
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

# A shell without job control starts a background command (`cmd &`) with SIGINT ignored, and children
# inherit that: the Ctrl-C tests would then time out. A handler here (unlike SIG_IGN) is reset to the
# default in every process the tests start, so they can be interrupted as at a terminal.
if signal.getsignal(signal.SIGINT) == signal.SIG_IGN:
    signal.signal(signal.SIGINT, signal.default_int_handler)

ROOT = Path(__file__).resolve().parent.parent
SAMPLES = ROOT / "samples"
# The shared, read-only data (corpus, research notes, the SARIF schema): ../shared beside the checkout, or
# wherever $CRASHLENS_SHARED says (a CI checkout elsewhere). Tests that need it skip, saying so, without it.
SHARED = Path(os.environ["CRASHLENS_SHARED"]) if os.environ.get("CRASHLENS_SHARED") else ROOT.parent / "shared"
CORPUS = SHARED / "corpus" / "dev"


def crashlens_exe() -> list[str]:
    """The installed console script (end-to-end tests run what a user runs)."""
    exe = Path(sys.executable).parent / "crashlens"
    if exe.exists():
        return [str(exe)]
    found = shutil.which("crashlens")
    if found:
        return [found]
    return [sys.executable, "-c", "from crashlens.cli import main; main()"]


def run_cli(*args: str, stdin: bytes | None = None, env: dict[str, str] | None = None,
            timeout: float = 60) -> subprocess.CompletedProcess[bytes]:
    e = dict(os.environ)
    e.pop("GITHUB_ACTIONS", None)
    e.pop("GITHUB_STEP_SUMMARY", None)
    e.setdefault("NO_COLOR", "1")
    e["COLUMNS"] = "120"
    if env:
        e.update(env)
    return subprocess.run([*crashlens_exe(), *args], input=stdin, capture_output=True, timeout=timeout, env=e)


def assert_one_line_error(p: subprocess.CompletedProcess[bytes], code: int, *needles: str) -> str:
    """The run failed with `code` and said why in one `crashlens: ...` line, with no traceback."""
    err = p.stderr.decode()
    assert p.returncode == code, (p.returncode, err)
    assert "Traceback" not in err
    assert err.startswith("crashlens: ") and err.count("\n") == 1, err
    for n in needles:
        assert n in err, (n, err)
    return err


@pytest.fixture
def cli():
    return run_cli


def paste_scanner(folder: str) -> Callable[[str], Any]:
    """`scan(name)`: what `crashlens scan` finds in samples/<folder>/<name>, a real bug-report paste read by
    path (the paste-mechanism tests); a skip, saying where it was looked for, where it is not present."""

    def scan(name: str) -> Any:
        from crashlens.cli.scan import run_scan

        path = SAMPLES / folder / name
        if not path.is_file():
            pytest.skip(f"{path} not present")
        return run_scan((str(path),), (), audit=False).diagnoses

    return scan


def scan_document(path: Path) -> list[dict[str, Any]]:
    """The crashlens/v1 JSON diagnoses of one log read by path (a recording or a built case)."""
    from crashlens.cli.scan import run_scan
    from crashlens.render.json import document

    return document(run_scan((str(path),), (), audit=False, jobs=1))["diagnoses"]


def recorded_fatal(raw: Path, tmp_path: Path, version: str, name: str) -> dict[str, Any]:
    """The one fatal diagnosis of a recording, `<raw>/t<version>/<name>.log.gz`, unpacked into tmp_path."""
    import gzip

    log = tmp_path / "run.log"
    log.write_bytes(gzip.decompress((raw / f"t{version}" / f"{name}.log.gz").read_bytes()))
    (d,) = [d for d in scan_document(log) if d["fatal"]]
    return d


def fix_titles(diag: Any) -> list[str]:
    """A diagnosis's fixes, by title, best first."""
    return [f.title for f in diag.fixes]


def needs_corpus() -> None:
    if not CORPUS.is_dir():
        pytest.skip("../shared/corpus/dev is not present")


def needs_shared(relpath: str) -> Path:
    """A file of the shared data, or a skip that says where it was looked for."""
    path = SHARED / relpath
    if not path.is_file():
        pytest.skip(f"{path} is not present (../shared beside the checkout, or set CRASHLENS_SHARED)")
    return path


def wait_holding(proc: subprocess.Popen[bytes], path: Path, timeout: float = 30) -> None:
    """Wait until the process `proc` has `path` open (Linux /proc): the watcher is then following it."""
    import time

    want = os.path.realpath(path)
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        try:
            if any(os.readlink(fd) == want for fd in Path(f"/proc/{proc.pid}/fd").iterdir()):
                return
        except OSError:
            pass
        time.sleep(0.02)
    raise AssertionError("the watcher never opened the file")


def cl(*args: str, cwd: Path, env: dict[str, str] | None = None, timeout: float = 120) -> subprocess.CompletedProcess[str]:
    """crashlens ARGS in `cwd`, text out, no colour, 120 columns."""
    e = {**os.environ, "NO_COLOR": "1", "COLUMNS": "120", **(env or {})}
    return subprocess.run([*crashlens_exe(), *args], cwd=cwd, capture_output=True, text=True, timeout=timeout, env=e)


@pytest.fixture
def repro(tmp_path: Path) -> Path:
    """A copy of samples/repro (the code the raw logs were recorded from), as the current directory."""
    dst = tmp_path / "repro"
    shutil.copytree(SAMPLES / "repro", dst, ignore=shutil.ignore_patterns("__pycache__"))
    return dst


def plan(repro: Path, log: str) -> dict[str, object]:
    """`crashlens fix --format json` of a recorded log in samples/fix, planned against the copy."""
    import json

    p = cl("fix", str(SAMPLES / "fix" / log), "--format", "json", cwd=repro)
    assert p.returncode == 0, p.stdout + p.stderr
    return json.loads(p.stdout)
