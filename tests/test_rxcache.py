"""rxcache.py keeps the `regex` module's compiled form of catalog patterns between runs: what it gives back
must be made from exactly what regex.compile hands its engine, a scan that uses it must not even import
regex's Python compiler, and a damaged or foreign cache file must cost nothing but time."""

from __future__ import annotations

import marshal
import os
import subprocess
import sys
import zlib
from pathlib import Path

import pytest

from conftest import SAMPLES

regex = pytest.importorskip("regex")

from crashlens import rxcache  # noqa: E402

CRASH = SAMPLES / "sglang-1rank-pcg-fp4.log"
PROBE = ("import sys, io, contextlib\nfrom crashlens.cli import main\n"
         f"sys.argv = ['crashlens', '--format', 'json', {str(CRASH)!r}]\n"
         "out = io.StringIO()\n"
         "with contextlib.redirect_stdout(out):\n"
         "    try:\n        main()\n    except SystemExit:\n        pass\n"
         "print(out.getvalue())\n"
         "print('regex._regex_core' in sys.modules, file=sys.stderr)\n")


def run_in(cache: str) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "XDG_CACHE_HOME": cache}
    env.pop("CRASHLENS_NO_CACHE", None)
    return subprocess.run([sys.executable, "-c", PROBE], capture_output=True, text=True, env=env,
                          stdin=subprocess.DEVNULL)


def texts() -> list[str]:
    """Text the catalog's patterns run on: a recorded log, whole and line by line, and every example."""
    from crashlens.catalog import get_catalog

    log = CRASH.read_text(encoding="utf-8", errors="replace")
    out = [log, *log.splitlines()]
    for sig in get_catalog([]).signatures:
        out += [e.text for e in sig.examples]
    return out


def cache_file(cache) -> Path:
    engine = zlib.crc32(rxcache._engine_identity().encode("utf-8", "surrogateescape"))
    return Path(cache) / "crashlens" / f"regex-py{sys.version_info[0]}{sys.version_info[1]}-{engine:08x}.marshal"


def test_each_engine_keeps_its_own_file(tmp_path, monkeypatch):
    """Two environments (two `regex` engine files) used in turn must not write over each other's kept
    patterns: each would find the other's engine named in a shared file and compile everything again."""
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path))
    monkeypatch.delenv("CRASHLENS_NO_CACHE", raising=False)
    names = set()
    for identity in ("3.11.7|/venv-a/regex/_regex.so|1|2", "3.11.7|/venv-b/regex/_regex.so|1|2"):
        monkeypatch.setattr(rxcache, "_identity", identity)
        names.add(rxcache._cache_file())
    assert len(names) == 2 and all(n.startswith(str(tmp_path)) for n in names)


def test_kept_patterns_are_what_regex_compile_hands_its_engine(tmp_path):
    first = run_in(str(tmp_path))
    assert '"diagnoses"' in first.stdout, first.stderr
    assert first.stderr.split()[-1] == "True"  # nothing kept yet: regex compiled them
    identity, magic, table = marshal.loads(cache_file(tmp_path).read_bytes())
    assert identity == rxcache._engine_identity() and magic == sys.modules["regex._regex"].MAGIC
    assert len(table) >= 10  # the catalog patterns one diagnosis tries
    sample = texts()
    for pattern, args in table.items():
        rx, fresh = rxcache._capture(regex, pattern, regex.MULTILINE | regex.V0)
        # regex lays a set of first characters out in set order, which differs from one compile to the
        # next: the opcodes are the same, maybe in another order; everything else is equal.
        assert fresh is not None and fresh[0] == args[0] and fresh[2:] == args[2:], pattern
        assert sorted(fresh[1]) == sorted(args[1]), pattern
        kept = sys.modules["regex._regex"].compile(pattern, *args)
        assert (kept.pattern, kept.flags, kept.groupindex) == (rx.pattern, rx.flags, rx.groupindex)
        for text in sample:
            a, b = kept.search(text, timeout=1), rx.search(text, timeout=1)
            assert (a and (a.span(), a.groupdict())) == (b and (b.span(), b.groupdict())), (pattern, text[:80])
    second = run_in(str(tmp_path))
    assert second.stdout == first.stdout
    # Every pattern came from the cache: the engine alone was loaded, not regex's 4,600-line compiler.
    assert second.stderr.split()[-1] == "False", second.stderr


def test_a_kept_pattern_searches_as_regex_compiles_it(tmp_path, monkeypatch):
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path))
    monkeypatch.delenv("CRASHLENS_NO_CACHE", raising=False)
    for name, value in (("_table", None), ("_identity", None), ("_ext", None), ("_table_magic", None),
                        ("_dirty", False), ("_used", set())):
        monkeypatch.setattr(rxcache, name, value)
    pattern = r"(?P<callee>[\w.]+)\(\) (?:takes|got) (?:no|\d+) arguments?|^\s+File \"(?P<file>[^\"]+)\"|\p{Lu}\w++x"
    rxcache.compile(pattern)
    rxcache._save()
    monkeypatch.setattr(rxcache, "_table", None)
    monkeypatch.setattr(rxcache, "_ext", None)

    def refuse(*a):
        raise AssertionError("compiled again")

    monkeypatch.setattr(rxcache, "_capture", refuse)
    kept = rxcache.compile(pattern)
    fresh = regex.compile(pattern, regex.MULTILINE | regex.V0)
    for text in ('x\n  File "/a/b.py", line 3', "torch.ops.foo() takes 2 arguments", "Abcx", "Abc x", ""):
        a, b = kept.search(text, timeout=0.25), fresh.search(text, timeout=0.25)
        assert (a and (a.span(), a.groupdict())) == (b and (b.span(), b.groupdict())), text


@pytest.mark.parametrize("damage", [b"", b"not marshal", marshal.dumps(("other engine", 1, {"a": (0,)}))])
def test_a_damaged_or_foreign_cache_file_is_ignored(tmp_path, damage):
    good = run_in(str(tmp_path / "fresh"))
    path = cache_file(tmp_path / "bad")
    path.parent.mkdir(parents=True)
    path.write_bytes(damage)
    bad = run_in(str(tmp_path / "bad"))
    assert bad.stdout == good.stdout and bad.returncode == good.returncode
    identity, _, table = marshal.loads(path.read_bytes())  # rewritten for this engine
    assert identity == rxcache._engine_identity() and "a" not in table


def test_no_cache_compiles_the_ordinary_way(tmp_path):
    env = {**os.environ, "XDG_CACHE_HOME": str(tmp_path), "CRASHLENS_NO_CACHE": "1"}
    got = subprocess.run([sys.executable, "-c", PROBE], capture_output=True, text=True, env=env,
                         stdin=subprocess.DEVNULL)
    assert '"diagnoses"' in got.stdout and not cache_file(tmp_path).exists()
