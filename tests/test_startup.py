"""What a scan loads. Most of a small scan's start-up time is imports (README "Performance"); a
module that comes back onto the common path costs every run, and no timing test would catch it on a
noisy machine. Here the modules themselves are checked."""

from __future__ import annotations

import subprocess
import sys

import pytest

from conftest import SAMPLES

# Each costs 4-60 ms to import, and the run named does not need it.
NOT_FOR_ANY_SCAN = ("click", "typing", "rich", "dataclasses", "concurrent.futures", "logging")
NOT_WITHOUT_A_CRASH = ("regex", "json", "tomllib", "tomli", "gzip", "hashlib", "ast")


def modules_after(*argv: str) -> tuple[int, bytes, set[str]]:
    code = ("import sys, atexit\n"
            "atexit.register(lambda: sys.stderr.write('\\nMODULES ' + ' '.join(sorted(sys.modules))))\n"
            "from crashlens.cli import main\n"
            f"sys.argv = ['crashlens', *{list(argv)!r}]\n"
            "main()\n")
    p = subprocess.run([sys.executable, "-c", code], capture_output=True, stdin=subprocess.DEVNULL, timeout=60,
                       check=False)
    err = p.stderr.decode()
    return p.returncode, p.stdout, set(err.rpartition("MODULES ")[2].split())


def test_a_crash_free_scan_loads_no_diagnosis_machinery():
    rc, out, mods = modules_after(str(SAMPLES / "sglang-healthy.log"))
    assert rc == 0 and b"no crashes found" in out
    assert mods.isdisjoint(NOT_FOR_ANY_SCAN + NOT_WITHOUT_A_CRASH), mods & set(NOT_FOR_ANY_SCAN + NOT_WITHOUT_A_CRASH)


@pytest.mark.parametrize("fmt", ["terminal", "json"])
def test_a_scan_with_a_crash_loads_only_what_its_report_needs(fmt):
    rc, out, mods = modules_after("--format", fmt, str(SAMPLES / "sglang-1rank-pcg-fp4.log"))
    assert rc == 1 and b"subprocess-thread-lock" in out
    assert "regex" in mods  # the catalog's patterns run under a timeout
    assert mods.isdisjoint(NOT_FOR_ANY_SCAN), mods & set(NOT_FOR_ANY_SCAN)


def test_the_version_loads_nothing_of_the_pipeline():
    rc, out, mods = modules_after("--version")
    assert rc == 0 and out.startswith(b"crashlens, version ")
    assert "click" not in mods and "crashlens.catalog" not in mods and "crashlens.pipeline" not in mods
