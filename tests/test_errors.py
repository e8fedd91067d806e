"""Every exit code and error message the README documents, through the installed console script: one line on
stderr, never a traceback, and nothing the user gave is ever modified."""

from __future__ import annotations

import hashlib
import os
import pty
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest
from conftest import CORPUS, SAMPLES, assert_one_line_error, crashlens_exe, run_cli

from crashlens.catalog import load_catalog

SIG = "subprocess-thread-lock"


def _fragment() -> str:
    """A real torch log fragment (the catalog's own positive example) that diagnoses as a fatal crash."""
    sig = load_catalog().get(SIG)
    assert sig is not None
    return next(e.text for e in sig.examples if e.expect_match)


@pytest.fixture
def crash_log(tmp_path: Path) -> Path:
    p = tmp_path / "crash.log"
    p.write_text(_fragment())
    return p


@pytest.fixture
def big_log(tmp_path: Path) -> Path:
    """Hundreds of distinct crashes: far more output than a pipe buffer holds."""
    text = _fragment()
    parts = [text.replace("lib_helpers.py", f"lib_helpers_{i}.py").replace("get_git_rev", f"get_rev_{i}")
             for i in range(300)]
    p = tmp_path / "big.log"
    p.write_text("\n".join(parts))
    return p


# -- 0, 1 ----------------------------------------------------------------------------------------------------


def test_exit_0_when_nothing_fatal(tmp_path):
    log = tmp_path / "ok.log"
    log.write_text("[2025-11-30 11:18:05] INFO:     Application startup complete.\n")
    p = run_cli(str(log))
    assert p.returncode == 0 and p.stderr == b""


def test_exit_1_when_a_fatal_crash_is_diagnosed(crash_log):
    p = run_cli("--no-audit", str(crash_log))
    assert p.returncode == 1 and b"Traceback" not in p.stderr


@pytest.mark.parametrize("args", [["--help"], ["--version"], ["scan", "--help"]])
def test_help_and_version_exit_0(args):
    p = run_cli(*args)
    assert p.returncode == 0 and p.stdout and p.stderr == b""


# -- 2: input errors ------------------------------------------------------------------------------------------


def test_missing_file(tmp_path):
    assert_one_line_error(run_cli(str(tmp_path / "nope.log")), 2, "nope.log", "no such file")


def test_directory(tmp_path):
    assert_one_line_error(run_cli(str(tmp_path)), 2, "is a directory")


def test_permission_denied_unreadable_file(tmp_path):
    if os.geteuid() != 0:
        log = tmp_path / "secret.log"
        log.write_text("x\n")
        log.chmod(0)
        assert_one_line_error(run_cli(str(log)), 2, "secret.log", "permission denied")
        return
    # root reads any ordinary file; a write-only sysctl refuses even root.
    target = Path("/proc/sys/vm/compact_memory")
    if not target.exists():
        pytest.skip("no write-only /proc file to read as root")
    assert_one_line_error(run_cli(str(target)), 2, "compact_memory", "permission denied")


def test_one_bad_file_among_good_ones_is_stillassert_one_line_error(tmp_path, crash_log):
    p = run_cli(str(crash_log), str(tmp_path / "missing.log"))
    assert_one_line_error(p, 2, "missing.log")


def test_file_name_with_control_characters_staysassert_one_line_error(tmp_path):
    p = run_cli(str(tmp_path / "evil\x1b[2J\nname.log"))
    err = assert_one_line_error(p, 2, "no such file")
    assert "\x1b" not in err


# -- 2: usage errors ------------------------------------------------------------------------------------------


@pytest.mark.parametrize("args,needle", [
    (["--no-such-option", "x.log"], "--no-such-option"),
    (["--format", "xml", "x.log"], "--format"),
    (["explain", "no-such-signature"], "no-such-signature"),
    (["watch"], "FILES"),
])
def test_invalid_options_are_one_line_usage_errors(args, needle):
    assert_one_line_error(run_cli(*args), 2, needle, "crashlens")


def test_no_input_on_a_terminal_is_a_usage_error():
    main_fd, tty_fd = pty.openpty()
    try:
        p = subprocess.run([*crashlens_exe()], stdin=tty_fd, capture_output=True, timeout=30,
                           env={**os.environ, "NO_COLOR": "1"})
    finally:
        os.close(main_fd)
        os.close(tty_fd)
    assert_one_line_error(p, 2, "no log file given")


def test_malformed_signature_file(tmp_path, crash_log):
    (tmp_path / "sigs").mkdir()
    (tmp_path / "sigs" / "bad.toml").write_text("id = [\n")
    assert_one_line_error(run_cli("--signatures", str(tmp_path / "sigs"), str(crash_log)), 2, "bad.toml", "not valid TOML")


# -- 3: internal errors ---------------------------------------------------------------------------------------


def _with_a_bug(tmp_path: Path) -> dict[str, str]:
    """A sitecustomize that breaks one stage, so the installed script meets an unexpected exception."""
    d = tmp_path / "inject"
    d.mkdir()
    (d / "sitecustomize.py").write_text(
        "import crashlens.pipeline as p\n"
        "def boom(*a, **k):\n"
        "    raise ZeroDivisionError('simulated bug')\n"
        "p.SourceSession.feed = boom\n"
    )
    return {"PYTHONPATH": str(d)}


def test_internal_error_is_one_line_and_exit_3(tmp_path, crash_log):
    p = run_cli("--no-audit", str(crash_log), env=_with_a_bug(tmp_path))
    assert_one_line_error(p, 3, "internal error", "please report", "ZeroDivisionError", "CRASHLENS_DEBUG")


def test_crashlens_debug_shows_the_traceback(tmp_path, crash_log):
    p = run_cli("--no-audit", str(crash_log), env={**_with_a_bug(tmp_path), "CRASHLENS_DEBUG": "1"})
    assert p.returncode == 3
    assert b"Traceback" in p.stderr and b"simulated bug" in p.stderr


# -- broken pipe ----------------------------------------------------------------------------------------------


@pytest.mark.parametrize("fmt", ["terminal", "json", "jsonl"])
@pytest.mark.parametrize("unbuffered", [False, True])
def test_closed_stdout_is_not_an_error(big_log, fmt, unbuffered):
    """`crashlens big.log | head -1` through a real pipe: no message, no traceback, and the exit code of
    the findings (1: fatal crashes), as if the output had been read, whether or not the reader left first."""
    env = {**os.environ, "NO_COLOR": "1", "COLUMNS": "120"}
    env.pop("PYTHONUNBUFFERED", None)
    if unbuffered:
        env["PYTHONUNBUFFERED"] = "1"
    writer = subprocess.Popen([*crashlens_exe(), "--no-audit", "--format", fmt, str(big_log)],
                              stdout=subprocess.PIPE, stderr=subprocess.PIPE, env=env)
    head = subprocess.Popen(["head", "-1"], stdin=writer.stdout, stdout=subprocess.PIPE)
    assert writer.stdout is not None
    writer.stdout.close()  # head alone holds the read end
    first, _ = head.communicate(timeout=60)
    err = writer.stderr.read() if writer.stderr else b""
    rc = writer.wait(timeout=60)
    assert first.strip()
    assert err == b"", err
    assert rc == 1


# -- 130: Ctrl-C ----------------------------------------------------------------------------------------------


def _wait_until_blocked(pid: int, limit: float = 20.0) -> None:
    """Until the process sleeps in a read (Linux wchan), so SIGINT lands in the scan, not in start-up."""
    deadline = time.monotonic() + limit
    wchan = Path(f"/proc/{pid}/wchan")
    settled = 0
    while time.monotonic() < deadline:
        try:
            state = wchan.read_text()
        except OSError:
            time.sleep(3)
            return
        # Blocked waiting for input (or sleeping between polls), and still so a moment later: start-up
        # (imports read files, which can look like a wait too) is over.
        waiting = any(w in state for w in ("pipe", "poll", "select", "nanosleep", "wait_woken"))
        settled = settled + 1 if waiting else 0
        if settled >= 4:
            time.sleep(0.1)
            return
        time.sleep(0.05)


def _interrupt(args: list[str]) -> tuple[int, bytes]:
    env = {**os.environ, "NO_COLOR": "1"}
    p = subprocess.Popen([*crashlens_exe(), *args], stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                         stderr=subprocess.PIPE, env=env)
    assert p.stdin is not None
    p.stdin.write(_fragment().encode()[:200])
    p.stdin.flush()
    _wait_until_blocked(p.pid)
    p.send_signal(signal.SIGINT)
    try:
        _out, err = p.communicate(timeout=30)
    finally:
        if p.poll() is None:
            p.kill()
    return p.returncode, err


def test_ctrl_c_while_reading_stdin_exits_130():
    rc, err = _interrupt(["--no-audit", "-"])
    assert rc == 130
    assert err == b"crashlens: interrupted\n"


def test_ctrl_c_while_watching_exits_130(tmp_path, crash_log):
    if run_cli("watch", "--help").returncode != 0:
        pytest.skip("watch is not in this build")
    rc, err = _interrupt(["watch", "--no-audit", str(crash_log)] if _has_no_audit_watch() else
                         ["watch", str(crash_log)])
    assert rc == 130
    assert b"Traceback" not in err and b"interrupted" in err


def _has_no_audit_watch() -> bool:
    return b"--no-audit" in run_cli("watch", "--help").stdout


# -- nothing the user gave is modified ------------------------------------------------------------------------


def _tree_hashes(root: Path) -> dict[str, tuple[str, int]]:
    out = {}
    for p in sorted(root.rglob("*")):
        if p.is_file():
            st = p.stat()
            out[str(p.relative_to(root))] = (hashlib.sha256(p.read_bytes()).hexdigest(), st.st_mtime_ns)
    return out


def _inputs(tmp_path: Path) -> Path:
    d = tmp_path / "inputs"
    (d / "nested").mkdir(parents=True)
    (d / "crash.log").write_text(_fragment())
    (d / "nested" / "crlf.log").write_bytes(_fragment().replace("\n", "\r\n").encode())
    import gzip

    (d / "nested" / "z.log.gz").write_bytes(gzip.compress(_fragment().encode()))
    for extra in (*sorted(SAMPLES.glob("*.log"))[:2], *sorted(CORPUS.glob("*.log"))[:2]):
        (d / extra.name).write_bytes(extra.read_bytes())
    return d


def test_scan_and_ci_modify_nothing_they_read(tmp_path):
    d = _inputs(tmp_path)
    before = _tree_hashes(d)
    logs = [str(p) for p in sorted(d.rglob("*")) if p.is_file()]
    runs = [
        run_cli("--no-audit", *logs),
        run_cli("--format", "json", *logs),
        run_cli("ci", str(d), "--format", "markdown", env={"GITHUB_ACTIONS": ""}),
        run_cli("ci", str(d), "--format", "sarif", "--output", str(tmp_path / "out.sarif")),
    ]
    for p in runs:
        assert p.returncode in (0, 1, 2), p.stderr
        assert b"Traceback" not in p.stderr
    assert _tree_hashes(d) == before
    # The only file written is the one the user named with --output.
    assert sorted(x.name for x in tmp_path.iterdir()) == sorted(["inputs", "out.sarif"] +
                                                                 (["inject"] if (tmp_path / "inject").exists() else []))


def test_no_python_fallback_needed():
    """These tests run what a user runs: the installed console script."""
    assert Path(crashlens_exe()[0]).name == "crashlens" or sys.executable in crashlens_exe()


_RENDER_TO_CLOSED_PIPE = """
import io, os, sys
from crashlens.catalog import get_catalog
from crashlens.pipeline import combine, scan_lines
from crashlens.render.terminal import render
cat = get_catalog()
text = next(e.text for e in cat.get("subprocess-thread-lock").examples if e.expect_match)
n, d = scan_lines("x", text.splitlines() * 1, cat)
r, w = os.pipe()
os.close(r)
out = os.fdopen(w, "w")
try:
    for _ in range(200):
        render(combine([("x", n, d)]), out, color=False, width=100)
        out.flush()
except BrokenPipeError:
    print("BrokenPipeError", file=sys.stderr)
except SystemExit as e:
    print("SystemExit", e.code, file=sys.stderr)
# The test's own pipe still holds unflushed text; drop it so interpreter shutdown stays quiet.
os.dup2(os.open(os.devnull, os.O_WRONLY), w)
"""


def test_terminal_renderer_reports_a_closed_pipe_as_broken_pipe():
    p = subprocess.run([sys.executable, "-c", _RENDER_TO_CLOSED_PIPE], capture_output=True, timeout=60)
    assert p.stderr.decode().strip() == "BrokenPipeError", p.stderr


def test_a_damaged_catalog_cache_is_ignored_and_rewritten(tmp_path):
    """The parsed catalog is cached in $XDG_CACHE_HOME/crashlens; a garbled or truncated cache file
    must not change a diagnosis or fail a scan: it is parsed again and the cache written anew."""
    log = str(SAMPLES / "sglang-1rank-pcg-fp4.log")
    env = {"XDG_CACHE_HOME": str(tmp_path)}
    first = run_cli("scan", "--format", "json", log, env=env)
    caches = list((tmp_path / "crashlens").glob("catalog-*"))
    assert len(caches) == 1 and caches[0].stat().st_size > 1000
    for junk in (b"\x00garbage" * 50, caches[0].read_bytes()[:100]):
        caches[0].write_bytes(junk)
        again = run_cli("scan", "--format", "json", log, env=env)
        assert again.returncode == first.returncode == 1
        assert again.stdout == first.stdout and again.stderr == b""
        assert caches[0].stat().st_size > 1000  # rewritten whole


def test_each_installed_copy_keeps_its_own_parsed_cache(tmp_path):
    """Entries are keyed by file path, so two installs (a venv per project) sharing one cache file would
    each load the other's whole catalog on every run: each copy has its own file, and a second copy's
    scans leave the first one's file as it was."""
    import shutil

    import crashlens

    env = {**os.environ, "XDG_CACHE_HOME": str(tmp_path / "cache")}
    env.pop("CRASHLENS_NO_CACHE", None)
    copy = tmp_path / "other-venv"
    shutil.copytree(Path(crashlens.__file__).parent, copy / "crashlens")
    from crashlens.catalog import builtin_dir

    if not (copy / "crashlens" / "signatures").is_dir():  # an editable install: the catalog is the repo's
        shutil.copytree(builtin_dir(), copy / "crashlens" / "signatures")
    log = str(SAMPLES / "sglang-1rank-pcg-fp4.log")
    scan = "import sys; sys.argv = ['crashlens', '--format', 'json', %r]; from crashlens.cli import main; main()" % log
    first = subprocess.run([sys.executable, "-c", scan], env=env, capture_output=True, timeout=120)
    (mine,) = (tmp_path / "cache" / "crashlens").glob("catalog-*")
    size = mine.stat().st_size
    env2 = {**env, "PYTHONPATH": str(copy)}
    second = subprocess.run([sys.executable, "-c", scan], env=env2, capture_output=True, timeout=120)
    assert second.stdout == first.stdout and first.returncode == second.returncode == 1
    caches = sorted((tmp_path / "cache" / "crashlens").glob("catalog-*"))
    assert len(caches) == 2 and mine in caches
    assert mine.stat().st_size == size


def test_the_parsed_cache_drops_what_changed_and_keeps_what_did_not(tmp_path, monkeypatch):
    """An entry is dropped when its file changes (or goes), not because a run did not read it: a scan
    without a crash must not throw away the audit rules' parse that the last crash's scan kept."""
    from crashlens import catalog

    kept, edited, gone = (tmp_path / n for n in ("kept.toml", "edited.toml", "gone.toml"))
    for p in (kept, edited, gone):
        p.write_text('x = "1"\n')
    cache = tmp_path / "cache.marshal"
    monkeypatch.setattr(catalog, "_cache_file", lambda: cache)
    monkeypatch.setattr(catalog, "_PARSED", {})
    monkeypatch.setattr(catalog, "_PARSED_DIRTY", True)  # and no save at exit from this test
    for p in (kept, edited, gone):
        assert catalog.read_shipped_toml(p) == {"x": "1"}
    edited.write_text('x = "22"\n')
    gone.unlink()
    catalog._PARSED_DIRTY = True
    catalog._save_parsed_cache()
    import marshal

    saved = marshal.loads(cache.read_bytes())
    assert [k.rsplit("|", 2)[0] for k in saved] == [str(kept)]
    assert catalog.read_shipped_toml(edited) == {"x": "22"}


def test_the_audit_rules_are_parsed_once_across_runs(tmp_path):
    code = ("import sys\nfrom crashlens.audit.rules import load_rules\nr = load_rules()\n"
            "print(len(r.exact), 'tomllib' in sys.modules or 'tomli' in sys.modules)\n")
    env = {**os.environ, "XDG_CACHE_HOME": str(tmp_path)}
    env.pop("CRASHLENS_NO_CACHE", None)
    runs = [subprocess.run([sys.executable, "-c", code], capture_output=True, env=env, timeout=60) for _ in range(2)]
    (n1, parsed1), (n2, parsed2) = (p.stdout.decode().split() for p in runs)
    assert int(n1) == int(n2) > 10
    assert (parsed1, parsed2) == ("True", "False")
