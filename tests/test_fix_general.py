"""`crashlens fix` on crashes of small models (samples/repro/heldout), from their recorded logs, without torch:
the condition of a `where` stays a tensor, a lock's bookkeeping block is guarded whole, an opaque op returns
as many tensors as its call site unpacks, and a helper returning what the standard library read is no op."""

from __future__ import annotations

import ast
import json
from pathlib import Path

from conftest import SAMPLES, cl, plan

LOGS = SAMPLES / "fix"
REPRO = SAMPLES / "repro"


def added(doc: dict[str, object]) -> list[str]:
    return [ln[1:] for ln in str(doc["diff"]).splitlines() if ln.startswith("+") and not ln.startswith("+++")]


def test_a_branch_on_item_becomes_torch_where_on_the_tensor_itself(repro: Path) -> None:
    """`if y.abs().max().item() > 10: y = y / 10`: torch.where cannot take the Python bool .item() makes."""
    doc = plan(repro, "heldout-clip-branch.log")
    assert doc["kind"] == "where"
    new = [ln for ln in added(doc) if "torch.where(" in ln]
    assert len(new) == 1 and ".item()" not in new[0]
    assert "torch.where(y.abs().max() > 10.0, y / 10.0, y)" in new[0]


def test_a_lock_held_for_bookkeeping_is_guarded_as_one_block(repro: Path) -> None:
    doc = plan(repro, "heldout-counted-layer.log")
    assert doc["kind"] == "guard"
    p = cl("fix", str(LOGS / "heldout-counted-layer.log"), "--apply", cwd=repro)
    assert p.returncode == 0, p.stderr
    src = (repro / "heldout" / "counted_layer.py").read_text()
    tree = ast.parse(src)
    fwd = next(n for n in ast.walk(tree) if isinstance(n, ast.FunctionDef) and n.name == "forward")
    guard = fwd.body[0]
    assert isinstance(guard, ast.If) and "is_compiling" in ast.unparse(guard.test)
    assert isinstance(guard.body[0], ast.With) and "self.calls += 1" in ast.unparse(guard.body[0])
    assert isinstance(fwd.body[-1], ast.Return)  # the result is computed under compile as before
    assert cl("fix", "--revert", cwd=repro).returncode == 0
    assert (repro / "heldout" / "counted_layer.py").read_bytes() == (REPRO / "heldout" / "counted_layer.py").read_bytes()


def test_a_lock_whose_block_computes_what_forward_returns_keeps_its_block(repro: Path) -> None:
    """Same crash, same line; but here the block computes a value the result uses: skipping it would change
    the output, so the block is not guarded. It runs under compile without the lock (a nullcontext); eager
    takes the lock as before."""
    f = repro / "heldout" / "counted_layer.py"
    text = f.read_text()
    text = text.replace("            self.calls += 1\n", "            n = self.calls + 1\n")
    text = text.replace("        return self.lin(x)\n", "        return self.lin(x) * n\n")
    f.write_text(text)
    before = f.read_bytes()
    p = cl("fix", str(LOGS / "heldout-counted-layer.log"), "--apply", cwd=repro)
    assert p.returncode == 0, p.stderr
    fwd = next(n for n in ast.walk(ast.parse(f.read_text())) if isinstance(n, ast.FunctionDef) and n.name == "forward")
    block = fwd.body[0]
    assert isinstance(block, ast.With)
    assert ast.unparse(block.items[0].context_expr) == (
        "self._lock if not torch.compiler.is_compiling() else contextlib.nullcontext()")
    assert ast.unparse(block.body[0]) == "n = self.calls + 1"  # computed under compile as in eager
    assert cl("fix", "--revert", cwd=repro).returncode == 0
    assert f.read_bytes() == before


def test_an_opaque_op_returns_as_many_tensors_as_the_call_site_unpacks(repro: Path) -> None:
    """fused_gelu_quant returns `kernel(x, scale)`, a callable its module does not define; the call site
    reads `q, s = ...`: the op's schema returns two tensors, not one."""
    doc = plan(repro, "heldout-quant-mlp.log")
    assert doc["kind"] == "custom-op"
    assert any('schema="(Tensor x, float scale=0.05) -> (Tensor, Tensor)"' in ln for ln in added(doc))
    # the fix is at the library's entry point, called from the model; the library is not patched
    assert all("site-packages" not in str(f) for f in doc["files"])  # type: ignore[union-attr]


def test_a_helper_returning_what_json_read_is_no_op_and_its_module_constant_argument_is_constant(repro: Path) -> None:
    """load_scales(TABLE) returns `json.load(f)["scales"]` (a list, not a tensor) and TABLE is a module-level
    path: the helper's result is a constant while tracing, not an opaque op over a `Tensor path`."""
    doc = plan(repro, "heldout-vocab-scale.log")
    assert doc["kind"] == "assume-constant", doc
    assert any("@torch.compiler.assume_constant_result" in ln for ln in added(doc))
    assert not any("custom_op" in ln for ln in added(doc))


def test_a_branch_on_an_environment_variable_gets_no_torch_where(repro: Path) -> None:
    """torch 2.1's dynamo cannot read os.environ: the `if` steers Python, not a tensor, so torch.where (which
    would not help) is not written. The branch computes one tensor (`q`) from the input: it runs as an opaque
    op, and the variable is still read on every call, as in eager (not frozen at import)."""
    log = SAMPLES / "corpus" / "raw" / "t2.1.2" / "os-environ-read.log.gz"
    p = cl("fix", str(log), "--format", "json", cwd=repro)
    doc = json.loads(p.stdout)
    assert not any("torch.where" in ln for ln in added(doc))
    assert doc["kind"] == "custom-op", doc
    p = cl("fix", str(log), "--apply", cwd=repro)
    src = (repro / "scenarios" / "os_environ_read.py").read_text()
    tree = ast.parse(src)
    fn = next(n for n in tree.body if isinstance(n, ast.FunctionDef) and n.name == "attention")
    assert "os.environ" not in ast.unparse(fn) and "torch.softmax" in ast.unparse(fn)
    lines = next(n for n in tree.body if isinstance(n, ast.FunctionDef) and n.name.startswith("attention_lines_"))
    assert "os.environ['FAKESERVE_ATTN_SOFTCAP'] == '1'" in ast.unparse(lines)
    assert cl("fix", "--revert", cwd=repro).returncode == 0
    assert (repro / "scenarios" / "os_environ_read.py").read_bytes() == (REPRO / "scenarios" / "os_environ_read.py").read_bytes()


def test_a_typeerror_python_never_raises_is_not_left_as_the_programs_own_bug(repro: Path) -> None:
    """`x.data_ptr() % 64` in forward: torch 2.13 reports an Observed exception raising
    `TypeError: unsupported operand type(s) for %: 'int' and 'int'`, which Python never raises for two ints.
    The program runs in eager, so crashlens must not call it the program's bug ("left untouched"): it names
    the value dynamo could not model and says to compute it outside the compiled region."""
    p = cl("fix", str(LOGS / "heldout3-aligned-input.log"), cwd=repro)
    out = p.stdout + p.stderr
    assert "fails without torch.compile too" not in out and "left untouched" not in out
    scan = cl(str(LOGS / "heldout3-aligned-input.log"), "--format", "json", cwd=repro)
    (d,) = json.loads(scan.stdout)["diagnoses"]
    assert d["signature"] == "observed-impossible-typeerror"
    assert d["culprit"]["line"] == 13 and "outside the compiled region" in d["fixes"][0]["title"]
