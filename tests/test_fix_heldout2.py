"""`crashlens fix` on the crashes of the third held-out batch (samples/repro/heldout2), from their recorded logs
(samples/fix/heldout2-*.log), without torch: what the misses of that batch showed about the planner."""

from __future__ import annotations

import ast
from pathlib import Path

from conftest import SAMPLES, cl, plan

LOGS = SAMPLES / "fix"
REPRO = SAMPLES / "repro"


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


def test_a_tensor_check_that_only_logs_is_guarded_whole(repro: Path) -> None:
    """`if torch.isnan(y).any(): logger.warning(...)`: no torch.where (nothing is assigned); the check only
    reports, so under compile it is skipped whole and forward still returns y."""
    text = apply_and_read(repro, "heldout2-nan-warning.log", "heldout2/nan_warning.py")
    fwd = forward_of(text)
    guard = next(st for st in fwd.body if isinstance(st, ast.If) and "is_compiling" in ast.unparse(st.test))
    assert isinstance(guard.body[0], ast.If) and "isnan" in ast.unparse(guard.body[0].test)
    assert isinstance(fwd.body[-1], ast.Return) and ast.unparse(fwd.body[-1]) == "return y"
    assert reverted(repro, "heldout2/nan_warning.py")


def test_a_time_stamp_read_only_by_a_warning_branch_is_guarded_with_that_branch(repro: Path) -> None:
    """`start = time.monotonic()` ... `if time.monotonic() - start > budget: warnings.warn(...)`: `start`
    feeds only a branch that reports, so both are skipped under compile; the computation stays."""
    text = apply_and_read(repro, "heldout2-deadline-check.log", "heldout2/deadline_check.py")
    fwd = forward_of(text)
    guards = [st for st in fwd.body if isinstance(st, ast.If) and "is_compiling" in ast.unparse(st.test)]
    assert len(guards) == 2
    assert "time.monotonic()" in ast.unparse(guards[0].body[0]) and "warnings.warn" in ast.unparse(guards[1])
    assert any("gelu" in ast.unparse(st) and not isinstance(st, ast.If) for st in fwd.body)
    assert reverted(repro, "heldout2/deadline_check.py")


def test_a_branch_that_raises_is_never_guarded(repro: Path) -> None:
    """The same check with a raise instead of a log call: skipping it under compile would hide a failure, so it is
    never guarded; run as an opaque op, the check still raises under compile."""
    f = repro / "heldout2" / "nan_warning.py"
    f.write_text(f.read_text().replace('logger.warning("NaN in CheckedBlock output")',
                                       'raise FloatingPointError("NaN in CheckedBlock output")'))
    before = f.read_bytes()
    p = cl("fix", str(LOGS / "heldout2-nan-warning.log"), "--apply", cwd=repro)
    # no guard; the only fix left is the opaque op over the check, which raises under compile as in eager
    assert p.returncode == 0, p.stdout + p.stderr
    text = f.read_text()
    assert "is_compiling" not in text
    tree = ast.parse(text)
    op = next(n for n in tree.body if isinstance(n, ast.FunctionDef) and n.name.startswith("forward_lines_"))
    assert any(isinstance(n, ast.Raise) for n in ast.walk(op))
    fwd = next(n for n in ast.walk(tree) if isinstance(n, ast.FunctionDef) and n.name == "forward")
    assert op.name in ast.unparse(fwd)
    assert cl("fix", "--revert", cwd=repro).returncode == 0 and f.read_bytes() == before


def test_a_store_on_self_that_forward_reads_back_is_not_skipped(repro: Path) -> None:
    """`if self.weight is None: g = torch.Generator()...; self.weight = nn.Parameter(...)`, then
    `x @ self.weight.t()`: guarding the creation would leave self.weight None under compile."""
    f = repro / "heldout2" / "lazy_param.py"
    before = f.read_bytes()
    p = cl("fix", str(LOGS / "heldout2-lazy-param.log"), "--apply", cwd=repro)
    assert p.returncode == 1 and "needs a person" in p.stderr and "used further on" in p.stderr
    assert f.read_bytes() == before


# --- a context manager dynamo cannot enter ------------------------------------------------------------


def _with_items(fn: ast.FunctionDef) -> list[str]:
    return [ast.unparse(i.context_expr) for n in ast.walk(fn) if isinstance(n, ast.With) for i in n.items]


def test_a_timing_span_is_entered_only_in_eager_at_the_users_with(repro: Path) -> None:
    """`with telemetry.span("attention"): h, _ = self.attn(...)`: the span (a contextlib.contextmanager in a
    library, timing with perf_counter under a lock) is no constant to assume, and the block computes the
    result. The user's `with` enters a nullcontext under compile; the library is not patched."""
    doc = plan(repro, "heldout2-span-timing.log")
    assert doc["kind"] == "guard" and "assume_constant" not in str(doc["diff"])
    assert all("site-packages" not in str(f) for f in doc["files"])  # type: ignore[union-attr]
    text = apply_and_read(repro, "heldout2-span-timing.log", "heldout2/span_timing.py")
    tree = ast.parse(text)
    assert any(isinstance(n, ast.Import) and n.names[0].name == "contextlib" for n in tree.body)
    item = _with_items(forward_of(text))[0]
    assert "telemetry.span('attention')" in item and "is_compiling()" in item and "nullcontext()" in item
    assert "h, _ = self.attn(x, x, x, need_weights=False)" in text  # the block itself is unchanged
    assert reverted(repro, "heldout2/span_timing.py", "heldout2/site-packages/telemetry/__init__.py")


def test_a_lock_around_a_cache_fill_is_entered_only_in_eager(repro: Path) -> None:
    """Double-checked locking around a module-level table cache: the block computes what the function
    returns, so it cannot be skipped; it runs, without the lock, under compile."""
    text = apply_and_read(repro, "heldout2-lock-table.log", "heldout2/lock_table.py")
    fn = forward_of(text, "rope_table")
    assert _with_items(fn) == ["_TABLES_LOCK if not torch.compiler.is_compiling() else contextlib.nullcontext()"]
    assert "_TABLES[key] = torch.outer(" in ast.unparse(fn)
    assert reverted(repro, "heldout2/lock_table.py")


def test_a_context_manager_whose_value_the_block_uses_is_not_replaced(repro: Path) -> None:
    """`with open(path) as f: spec = json.load(f)` (the culprit, in load_delta): a nullcontext would give
    the block None for `f`; the guard gives way, and the fix is the opaque op at the caller."""
    doc = plan(repro, "heldout2-adapter-json.log")
    assert doc["kind"] == "custom-op"
    assert "nullcontext" not in str(doc["diff"]) and "is_compiling" not in str(doc["diff"])


# --- assume_constant_result under functools.cache -----------------------------------------------------


def test_assume_constant_goes_on_the_def_under_functools_cache(repro: Path) -> None:
    """dynamo traces through functools.cache's wrapper to the function it wraps: a mark on the wrapper is
    never seen (the same crash came back). The decorator goes on the def, below @functools.cache."""
    text = apply_and_read(repro, "heldout2-machine-probe.log", "heldout2/machine_probe.py")
    fn = forward_of(text, "machine")
    decos = [ast.unparse(d) for d in fn.decorator_list]
    assert decos == ["functools.cache", "torch.compiler.assume_constant_result"]
    assert reverted(repro, "heldout2/machine_probe.py")
