"""`crashlens fix` on the crashes of the third held-out batch (samples/repro/heldout2), from their recorded logs
(samples/fix/heldout2-*.log), without torch: what the misses of that batch showed about the planner."""

from __future__ import annotations

import ast
import json
import os
import shutil
import subprocess
from pathlib import Path

import pytest

from conftest import SAMPLES, crashlens_exe

LOGS = SAMPLES / "fix"
REPRO = SAMPLES / "repro"


def cl(*args: str, cwd: Path) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "NO_COLOR": "1", "COLUMNS": "120"}
    return subprocess.run([*crashlens_exe(), *args], cwd=cwd, capture_output=True, text=True, timeout=120, env=env)


@pytest.fixture
def repro(tmp_path: Path) -> Path:
    dst = tmp_path / "repro"
    shutil.copytree(REPRO, dst, ignore=shutil.ignore_patterns("__pycache__"))
    return dst


def plan(repro: Path, log: str) -> dict[str, object]:
    p = cl("fix", str(LOGS / log), "--format", "json", cwd=repro)
    assert p.returncode == 0, p.stdout + p.stderr
    return json.loads(p.stdout)


def apply_and_read(repro: Path, log: str, rel: str) -> str:
    p = cl("fix", str(LOGS / log), "--apply", cwd=repro)
    assert p.returncode == 0, p.stdout + p.stderr
    return (repro / rel).read_text()


def forward_of(src: str, name: str = "forward") -> ast.FunctionDef:
    return next(n for n in ast.walk(ast.parse(src)) if isinstance(n, ast.FunctionDef) and n.name == name)


def reverted(repro: Path, *rels: str) -> bool:
    assert cl("fix", "--revert", cwd=repro).returncode == 0
    return all((repro / r).read_bytes() == (REPRO / r).read_bytes() for r in rels)


# --- a derived fake for a function that takes no tensor ------------------------------------------------


def test_a_derived_fake_of_a_loader_with_no_tensor_argument_puts_its_outputs_where_the_real_one_did(repro: Path) -> None:
    """load_delta(path) reads a JSON file and returns a tensor: an opaque op over `(str path) -> Tensor`. Its
    derived fake used to take the device from the first tensor argument, and there is none (StopIteration
    under fake mode, the same crash round after round)."""
    doc = plan(repro, "heldout2-adapter-json.log")
    assert doc["kind"] == "custom-op"
    shim = next(str(f) for f in doc["files"] if "_crashlens_" in str(f))  # type: ignore[union-attr]
    cl("fix", str(LOGS / "heldout2-adapter-json.log"), "--apply", cwd=repro)
    text = (repro / shim).read_text()
    fake = forward_of(text, "_fake")
    src = ast.unparse(fake)
    # every next() over the arguments has a default, and the outputs' device falls back to the recorded one
    for call in (n for n in ast.walk(fake) if isinstance(n, ast.Call) and ast.unparse(n.func) == "next"):
        assert len(call.args) == 2, ast.unparse(call)
    assert "o.device" in text and "device or dev" in src
    assert reverted(repro, "heldout2/adapter_json.py") and not (repro / shim).exists()


# --- the is_compiling guard: a check that only reports, an attribute read back -----------------------


def test_a_store_on_self_that_forward_reads_back_is_not_skipped(repro: Path) -> None:
    """`if self.weight is None: g = torch.Generator()...; self.weight = nn.Parameter(...)`, then
    `x @ self.weight.t()`: guarding the creation would leave self.weight None under compile."""
    f = repro / "heldout2" / "lazy_param.py"
    before = f.read_bytes()
    p = cl("fix", str(LOGS / "heldout2-lazy-param.log"), "--apply", cwd=repro)
    assert p.returncode == 1 and "needs a person" in p.stderr and "used further on" in p.stderr
    assert f.read_bytes() == before
