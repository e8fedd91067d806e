"""What a release holds: the licence, metadata a current setuptools accepts, an sdist whose own tests run,
and wheels tagged for what they contain (pure Python without the C helper)."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import sysconfig
import tarfile
import zipfile
from pathlib import Path

import pytest

from conftest import ROOT

if sys.version_info >= (3, 11):
    import tomllib
else:  # pragma: no cover
    import tomli as tomllib

PYPROJECT = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))
# What the tests read besides the package: each must be in the sdist.
TEST_INPUTS = ("tests", "samples", "signatures", "benchmarks")


def test_the_licence_file_is_the_apache_2_0_text() -> None:
    text = (ROOT / "LICENSE").read_text(encoding="utf-8")
    assert "Apache License" in text and "Version 2.0, January 2004" in text
    assert "TERMS AND CONDITIONS FOR USE, REPRODUCTION, AND DISTRIBUTION" in text
    assert "END OF TERMS AND CONDITIONS" in text and len(text) > 10_000  # the whole text, not a pointer to it


def test_metadata_uses_the_spdx_licence_expression() -> None:
    project = PYPROJECT["project"]
    assert project["license"] == "Apache-2.0"  # PEP 639; the {text = ...} table is deprecated
    assert "LICENSE" in project["license-files"]
    assert not any(c.startswith("License ::") for c in project.get("classifiers", []))  # refused with an expression
    # setuptools reads a licence expression from 77.0 on; an older one would refuse the string form
    (setuptools_req,) = [r for r in PYPROJECT["build-system"]["requires"] if r.startswith("setuptools")]
    assert setuptools_req.replace(" ", "") in ("setuptools>=77.0.3",)


def _setuptools_path(tmp: Path) -> str:
    """A directory holding a setuptools that reads PEP 639 metadata (what the build backend requires)."""
    try:
        import setuptools

        if int(setuptools.__version__.split(".")[0]) >= 77:
            return str(Path(setuptools.__file__).parent.parent)
    except ImportError:
        pass
    target = tmp / "setuptools"
    p = subprocess.run([sys.executable, "-m", "pip", "install", "-q", "--target", str(target), "setuptools>=77.0.3"],
                       capture_output=True, timeout=300)
    if p.returncode != 0:
        pytest.skip(f"cannot install setuptools>=77.0.3 to build with: {p.stderr.decode()[-300:]}")
    return str(target)


def _backend(setuptools_dir: str, cwd: Path, call: str, env: dict[str, str] | None = None) -> str:
    code = f"from setuptools import build_meta as b; print(b.{call})"
    e = {**os.environ, "PYTHONPATH": setuptools_dir, **(env or {})}
    p = subprocess.run([sys.executable, "-c", code], cwd=cwd, capture_output=True, timeout=600, env=e)
    assert p.returncode == 0, p.stderr.decode()[-2000:]
    return p.stdout.decode().strip().splitlines()[-1]


@pytest.fixture(scope="module")
def sdist(tmp_path_factory) -> tuple[str, Path]:
    """(setuptools dir, the unpacked sdist built from this checkout)."""
    tmp = tmp_path_factory.mktemp("release")
    st = _setuptools_path(tmp)
    work = tmp / "src"  # build from a copy: the checkout is not written to
    shutil.copytree(ROOT, work, ignore=shutil.ignore_patterns(".venv", ".git", "build", "dist", "*.egg-info",
                                                              "__pycache__", ".pytest_cache", ".hypothesis", "*.so"))
    name = _backend(st, work, f"build_sdist({str(tmp / 'dist')!r})")
    with tarfile.open(tmp / "dist" / name) as tar:
        tar.extractall(tmp / "unpacked")
    (unpacked,) = (tmp / "unpacked").iterdir()
    return st, unpacked


def test_the_sdist_holds_every_file_the_tests_read(sdist) -> None:
    _, unpacked = sdist
    skip = {"__pycache__", ".pytest_cache"}
    # what git ignores in a checkout is generated here (benchmarks/out/'s fleets), not something a test reads
    ignored: set[str] = set()
    if (ROOT / ".git").exists() and shutil.which("git"):
        out = subprocess.run(["git", "-C", str(ROOT), "ls-files", "--others", "--ignored", "--exclude-standard",
                              "--directory"], capture_output=True, text=True, timeout=60).stdout
        ignored = {line.rstrip("/") for line in out.splitlines() if line}
    missing = [str(p.relative_to(ROOT)) for d in TEST_INPUTS for p in (ROOT / d).rglob("*")
               if p.is_file() and not skip & set(p.parts) and p.suffix not in (".pyc", ".so")
               and not any(str(p.relative_to(ROOT)).startswith(i + "/") or str(p.relative_to(ROOT)) == i
                           for i in ignored)
               and not (unpacked / p.relative_to(ROOT)).is_file()]
    assert not missing, missing[:20]
    for name in ("LICENSE", "README.md", "tests/conftest.py", "src/crashlens/_lines.c",
                 "src/crashlens/schema/crashlens-v1.json", ".ci/run"):
        assert (unpacked / name).is_file(), name
    assert not list(unpacked.rglob("*.so")) and not list(unpacked.rglob("*.pyc"))
    pkg_info = (unpacked / "PKG-INFO").read_text(encoding="utf-8")
    assert "License-Expression: Apache-2.0" in pkg_info and "License-File: LICENSE" in pkg_info


def test_tests_run_from_the_unpacked_sdist(sdist) -> None:
    """One of the sdist's own test files, run in the unpacked sdist: it reads the conftest, every recorded
    sample and the catalog from there. (The whole suite from an sdist install: README "Development".)"""
    _, unpacked = sdist
    env = {k: v for k, v in os.environ.items() if not k.startswith(("PYTEST_", "GITHUB_"))}
    p = subprocess.run([sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", "tests/test_schema.py", "-x"],
                       cwd=unpacked, capture_output=True, timeout=600, env=env)
    out = p.stdout.decode()
    assert p.returncode == 0, out[-3000:]
    assert " passed" in out and "error" not in out.splitlines()[-1]


def _wheel(sdist, out: Path, env: dict[str, str]) -> zipfile.ZipFile:
    st, unpacked = sdist
    shutil.rmtree(unpacked / "build", ignore_errors=True)
    name = _backend(st, unpacked, f"build_wheel({str(out)!r})", env)
    return zipfile.ZipFile(out / name)


def test_a_wheel_built_without_the_c_helper_is_pure_python(sdist, tmp_path: Path) -> None:
    whl = _wheel(sdist, tmp_path, {"CC": "false"})  # a compiler that always fails: the helper is optional
    name = Path(whl.filename).name
    assert name.endswith("-py3-none-any.whl"), name
    names = whl.namelist()
    assert not [n for n in names if n.endswith((".so", ".pyd"))]
    assert not [n for n in names if ".data/platlib/" in n]
    wheel_meta = whl.read(next(n for n in names if n.endswith(".dist-info/WHEEL"))).decode()
    assert "Root-Is-Purelib: true" in wheel_meta
    for n in ("crashlens/schema/crashlens-v1.json", "crashlens/signatures/subprocess-thread-lock.toml"):
        assert n in names
    assert any(n.endswith(".dist-info/licenses/LICENSE") for n in names)


@pytest.mark.skipif(not sysconfig.get_config_var("CC") or shutil.which(
    str(sysconfig.get_config_var("CC")).split()[0]) is None, reason="no C compiler here")
def test_a_wheel_with_the_c_helper_is_tagged_for_its_platform(sdist, tmp_path: Path) -> None:
    whl = _wheel(sdist, tmp_path, {})
    name = Path(whl.filename).name
    assert not name.endswith("-none-any.whl"), name
    assert [n for n in whl.namelist() if n.startswith("crashlens/_lines") and n.endswith((".so", ".pyd"))]
