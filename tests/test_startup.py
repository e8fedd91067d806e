"""What a scan loads. Most of a small scan's start-up time is imports (docs/performance.md); a
module that comes back onto the common path costs every run, and no timing test would catch it on a
noisy machine. Here the modules themselves are checked."""

from __future__ import annotations

import os
import subprocess
import sys

import pytest

from conftest import SAMPLES

# Each costs 4-60 ms to import, and the run named does not need it.
NOT_FOR_ANY_SCAN = ("click", "typing", "rich", "dataclasses", "concurrent.futures", "logging")
NOT_WITHOUT_A_CRASH = ("regex", "json", "tomllib", "tomli", "gzip", "hashlib", "ast")


@pytest.fixture(scope="module")
def cache(tmp_path_factory) -> str:
    """A cache directory with the parsed catalog and the compiled patterns in it, as after a first run
    (a first run parses the catalog with tomllib, which imports typing)."""
    path = str(tmp_path_factory.mktemp("cache"))
    for log in ("sglang-healthy.log", "sglang-1rank-pcg-fp4.log"):
        modules_after(path, str(SAMPLES / log))
    return path


def modules_after(cache: str, *argv: str) -> tuple[int, bytes, set[str]]:
    code = ("import sys, atexit\n"
            "atexit.register(lambda: sys.stderr.write('\\nMODULES ' + ' '.join(sorted(sys.modules))))\n"
            "from crashlens.cli import main\n"
            f"sys.argv = ['crashlens', *{list(argv)!r}]\n"
            "main()\n")
    env = {**os.environ, "XDG_CACHE_HOME": cache}
    env.pop("CRASHLENS_NO_CACHE", None)
    p = subprocess.run([sys.executable, "-c", code], capture_output=True, stdin=subprocess.DEVNULL, timeout=60,
                       check=False, env=env)
    err = p.stderr.decode()
    return p.returncode, p.stdout, set(err.rpartition("MODULES ")[2].split())


def test_a_crash_free_scan_loads_no_diagnosis_machinery(cache):
    rc, out, mods = modules_after(cache, str(SAMPLES / "sglang-healthy.log"))
    assert rc == 0 and b"no crashes found" in out
    assert mods.isdisjoint(NOT_FOR_ANY_SCAN + NOT_WITHOUT_A_CRASH), mods & set(NOT_FOR_ANY_SCAN + NOT_WITHOUT_A_CRASH)


@pytest.mark.parametrize("fmt", ["terminal", "json"])
def test_a_scan_with_a_crash_loads_only_what_its_report_needs(cache, fmt):
    rc, out, mods = modules_after(cache, "--format", fmt, str(SAMPLES / "sglang-1rank-pcg-fp4.log"))
    assert rc == 1 and b"subprocess-thread-lock" in out
    # The catalog's patterns run under regex's timeouts, in its C engine; their compiled form is kept
    # between runs (rxcache.py), so regex's Python compiler (~15 ms to import) is not loaded.
    assert "regex._regex" in mods and "regex._regex_core" not in mods
    assert mods.isdisjoint(NOT_FOR_ANY_SCAN), mods & set(NOT_FOR_ANY_SCAN)


def test_the_version_loads_nothing_of_the_pipeline(cache):
    rc, out, mods = modules_after(cache, "--version")
    assert rc == 0 and out.startswith(b"crashlens, version ")
    assert "click" not in mods and "crashlens.catalog" not in mods and "crashlens.pipeline" not in mods
