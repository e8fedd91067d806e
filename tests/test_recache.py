"""recache.py keeps compiled regular expressions between runs: what it gives back must be the very
pattern re.compile makes, and a damaged or foreign cache file must cost nothing but time."""

from __future__ import annotations

import marshal
import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

from conftest import SAMPLES
from crashlens import recache


def run_scan_in(cache: str, *extra: str) -> subprocess.CompletedProcess[bytes]:
    env = {**os.environ, "XDG_CACHE_HOME": cache}
    env.pop("CRASHLENS_NO_CACHE", None)
    code = ("import sys\nfrom crashlens.cli import main\n"
            f"sys.argv = ['crashlens', '--format', 'json', {str(SAMPLES / 'sglang-1rank-pcg-fp4.log')!r}]\nmain()\n")
    return subprocess.run([sys.executable, "-c", code, *extra], capture_output=True, env=env,
                          stdin=subprocess.DEVNULL)


def cache_file(cache) -> str:
    return os.path.join(cache, "crashlens", f"re-py{sys.version_info[0]}{sys.version_info[1]}.marshal")


def test_every_kept_pattern_is_the_pattern_re_compiles(tmp_path):
    first = run_scan_in(str(tmp_path))
    assert first.returncode == 1, first.stderr
    _, table = marshal.loads(Path(cache_file(tmp_path)).read_bytes())
    assert len(table) > 40  # the framing, traceback and culprit rules at least
    for (pattern, flags), args in table.items():
        # Pattern equality compares the compiled opcodes, not just the source.
        assert recache._sre.compile(pattern, *args) == re.compile(pattern, flags), pattern
    second = run_scan_in(str(tmp_path))
    assert second.stdout == first.stdout


def test_a_cached_pattern_is_used_without_compiling(tmp_path, monkeypatch):
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path))
    monkeypatch.delenv("CRASHLENS_NO_CACHE", raising=False)
    monkeypatch.setattr(recache, "_table", None)
    rx = recache.compile(r"(?P<file>[^\s]+\.py):(?P<line>\d+)", re.MULTILINE)
    recache._save()
    monkeypatch.setattr(recache, "_table", None)

    def refuse(*a):
        raise AssertionError("compiled again")

    monkeypatch.setattr(recache, "_compiled_form", refuse)
    again = recache.compile(r"(?P<file>[^\s]+\.py):(?P<line>\d+)", re.MULTILINE)
    assert again == rx and again.groupindex == {"file": 1, "line": 2}
    assert again.search("at x/y.py:12 here").group("line") == "12"


@pytest.mark.parametrize("damage", [b"", b"\x00garbage", marshal.dumps(("another python", {("a", 0): (0, [1], 0, {}, ())}))])
def test_a_damaged_or_foreign_cache_is_ignored_and_rewritten(tmp_path, damage):
    good = run_scan_in(str(tmp_path))
    path = cache_file(tmp_path)
    with open(path, "wb") as fh:
        fh.write(damage)
    again = run_scan_in(str(tmp_path))
    assert again.returncode == good.returncode and again.stdout == good.stdout
    assert again.stderr == good.stderr == b""
    version, table = marshal.loads(Path(path).read_bytes())
    assert version == recache._version() and ("a", 0) not in table and len(table) > 40


def test_a_wrong_entry_is_compiled_afresh(monkeypatch):
    monkeypatch.setattr(recache, "_table", {("x+", 0): (0, [12345, 1], 0, {}, ())})  # invalid opcodes
    monkeypatch.setattr(recache, "_dirty", True)  # no save at exit from this test
    assert recache.compile("x+") == re.compile("x+")


def test_no_cache_means_no_file(tmp_path):
    env = {**os.environ, "XDG_CACHE_HOME": str(tmp_path), "CRASHLENS_NO_CACHE": "1"}
    p = subprocess.run([sys.executable, "-c", "import crashlens.cli.scan"], env=env, capture_output=True)
    assert p.returncode == 0, p.stderr
    assert not os.path.exists(cache_file(tmp_path))


def test_without_a_home_nothing_is_written_to_the_current_directory(monkeypatch):
    """expanduser gives "~" back when there is no $HOME and no passwd entry (a bare container): the
    caches must then be off, not written to ./~/.cache."""
    monkeypatch.delenv("XDG_CACHE_HOME", raising=False)
    monkeypatch.delenv("CRASHLENS_NO_CACHE", raising=False)
    monkeypatch.setattr(os.path, "expanduser", lambda p: p)
    from crashlens import catalog

    assert recache.cache_dir() is None and recache._cache_file() is None and catalog._cache_file() is None
    monkeypatch.setenv("XDG_CACHE_HOME", "/var/cache/x")
    assert recache.cache_dir() == os.path.join("/var/cache/x", "crashlens")
