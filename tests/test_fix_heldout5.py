"""`crashlens fix` on crashes of the sixth held-out batch (samples/repro/heldout5), from their recorded logs
(samples/fix/heldout5-*.log), without torch: what the misses of that batch showed about the planner."""

from __future__ import annotations

import ast
import json
import os
from pathlib import Path

import pytest

from conftest import SAMPLES, cl

LOGS = SAMPLES / "fix"
REPRO = SAMPLES / "repro"


def calls_of(src: str, func: str) -> list[ast.Call]:
    return [n for n in ast.walk(ast.parse(src)) if isinstance(n, ast.Call) and ast.unparse(n.func) == func]


def apply(repro: Path, log: str) -> None:
    p = cl("fix", str(LOGS / log), "--apply", cwd=repro)
    assert p.returncode == 0, p.stdout + p.stderr


def reverted(repro: Path, *rels: str) -> bool:
    assert cl("fix", "--revert", cwd=repro).returncode == 0
    return all((repro / r).read_bytes() == (REPRO / r).read_bytes() for r in rels)


def _added_top_level(src: str) -> ast.Module:
    """The module-level statements the fix added (they name `_CRASHLENS_...` or `_crashlens_...`)."""
    def added(n: ast.stmt) -> bool:
        if isinstance(n, ast.Assign):
            return all(isinstance(t, ast.Name) and t.id.startswith("_CRASHLENS") for t in n.targets)
        if isinstance(n, ast.FunctionDef):
            return n.name.startswith("_crashlens")
        return isinstance(n, ast.If) and "_crashlens" in ast.unparse(n)

    keep = [n for n in ast.parse(src).body if added(n)]
    return ast.Module(body=keep, type_ignores=[])


def test_the_process_id_is_read_once_per_process_and_again_in_a_forked_child(repro: Path) -> None:
    """`_SCRATCH.get(os.getpid())` in forward (dynamo cannot trace `posix.getpid`): the id moves to module
    level, every call of it in forward reads the value (both lines, one round), and a worker forked after the
    import computes its own id there, as the call did: the scratch buffers stay per process."""
    rel = "heldout5/getpid_scratch.py"
    apply(repro, "heldout5-getpid-scratch.log")
    text = (repro / rel).read_text()
    fwd = next(n for n in ast.walk(ast.parse(text)) if isinstance(n, ast.FunctionDef) and n.name == "forward")
    assert calls_of(ast.unparse(fwd), "os.getpid") == []
    assert ast.unparse(fwd).count("_CRASHLENS_OS_GETPID") == 2
    ns: dict[str, object] = {"os": os}
    exec(compile(_added_top_level(text), rel, "exec"), ns)
    assert ns["_CRASHLENS_OS_GETPID"] == os.getpid()
    if not hasattr(os, "fork"):
        pytest.skip("no fork here")
    r, w = os.pipe()
    pid = os.fork()
    if pid == 0:  # the child: report what the module-level value is there
        os.write(w, str(ns["_CRASHLENS_OS_GETPID"]).encode())
        os._exit(0)
    os.close(w)
    os.waitpid(pid, 0)
    assert int(os.read(r, 64)) == pid  # the child's own id, not the parent's
    assert ns["_CRASHLENS_OS_GETPID"] == os.getpid()
    assert reverted(repro, rel)


def test_a_thread_fact_is_not_made_a_module_constant(repro: Path) -> None:
    """`threading.get_ident()` differs per thread: computed once at import it would give every engine thread
    the same decode state. No module-level value is made for it."""
    p = cl("fix", str(LOGS / "heldout5-thread-ident.log"), "--format", "json", cwd=repro)
    assert '"kind": "move-to-module"' not in p.stdout
    assert "_CRASHLENS_THREADING_GET_IDENT" not in p.stdout


def test_a_fake_that_reads_a_size_from_a_value_gets_a_data_dependent_size(repro: Path) -> None:
    """The fake of `drop_pad` was written as the real code: `n = int(keep.sum().item())`. Fake tensors have no
    values, so tracing stopped on `u0`; the log names only forward's call of the op. The size becomes the fake
    API's unbacked size; the op's real kernel (what the program computes) is not touched."""
    rel = "heldout5/fake_item_compact.py"
    apply(repro, "heldout5-fake-item.log")
    text = (repro / rel).read_text()
    before = (REPRO / rel).read_text()
    fake = ast.unparse(next(n for n in ast.parse(text).body if isinstance(n, ast.FunctionDef) and n.name == "_"))
    assert "n = torch.library.get_ctx().new_dynamic_size()" in fake and ".item()" not in fake
    changed = [a for a, b in zip(before.splitlines(), text.splitlines()) if a != b]
    assert changed == ["    n = int(keep.sum().item())"]
    assert reverted(repro, rel)


def test_a_fake_that_uses_a_value_for_more_than_a_size_is_left_to_a_person(repro: Path) -> None:
    """The same fake, where the value read also picks a branch: an unbacked size cannot stand for it, and the
    fake is not rewritten."""
    f = repro / "heldout5" / "fake_item_compact.py"
    f.write_text(f.read_text().replace("    return x.new_empty(n, x.shape[1])",
                                       "    if n > 3:\n        n = 3\n    return x.new_empty(n, x.shape[1])"))
    p = cl("fix", str(LOGS / "heldout5-fake-item.log"), "--format", "json", cwd=repro)
    doc = json.loads(p.stdout)
    assert doc["status"] == "needs-a-person" and "more than an output size" in doc["reason"]
    assert "new_dynamic_size" not in f.read_text()


def test_a_fake_for_torch_before_2_4_is_not_given_the_newer_api(repro: Path) -> None:
    """torch.library.get_ctx().new_dynamic_size() came with register_fake (torch 2.4): a fix made for an older
    torch does not use it."""
    p = cl("fix", str(LOGS / "heldout5-fake-item.log"), "--torch", "2.1", "--format", "json", cwd=repro)
    doc = json.loads(p.stdout)
    assert doc["status"] == "needs-a-person" and "torch 2.4 or later" in doc["reason"]
