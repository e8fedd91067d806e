"""`crashlens fix` on the crashes the fourth held-out batch (samples/repro/heldout3) left to a person, from their
recorded logs (samples/fix/heldout3-*.log), without torch: what a user accepts instead of "what the statement
computes is used further on"."""

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


def method(src: str, name: str) -> ast.FunctionDef:
    return next(n for n in ast.walk(ast.parse(src)) if isinstance(n, ast.FunctionDef) and n.name == name)


def reverted(repro: Path, *rels: str) -> bool:
    assert cl("fix", "--revert", cwd=repro).returncode == 0
    return all((repro / r).read_bytes() == (REPRO / r).read_bytes() for r in rels)


def needs_a_person(repro: Path, log: str) -> str:
    p = cl("fix", str(LOGS / log), "--format", "json", cwd=repro)
    assert p.returncode == 1, p.stdout + p.stderr
    import json

    doc = json.loads(p.stdout)
    assert doc["status"] == "needs-a-person"
    return str(doc["reason"])


# --- a process constant read in forward: computed once at module level ------------------------------------


def test_a_cpu_count_in_forward_is_read_once_at_module_level_and_the_rest_of_the_line_stays(repro: Path) -> None:
    """`n = max(1, min(os.cpu_count() or 1, x.shape[0]))`: dynamo cannot trace the builtin posix.cpu_count. The
    statement's value is used further on (the chunk count), so no guard; the count of CPUs is the same for the
    whole process (signatures/patches/constants.toml), so it is read once when the module loads."""
    doc = plan(repro, "heldout3-cpu-count-chunks.log")
    assert doc["kind"] == "move-to-module"
    text = apply_and_read(repro, "heldout3-cpu-count-chunks.log", "heldout3/cpu_count_chunks.py")
    fwd = ast.unparse(method(text, "forward"))
    assert "cpu_count" not in fwd.replace("CPU_COUNT", "")
    assert "x.shape[0]" in fwd and "x.chunk(n)" in fwd  # the per-call part is untouched
    tree = ast.parse(text)
    hoisted = [n for n in tree.body if isinstance(n, ast.Assign) and ast.unparse(n.value) == "os.cpu_count()"]
    assert len(hoisted) == 1
    name = ast.unparse(hoisted[0].targets[0])
    assert name in fwd
    assert reverted(repro, "heldout3/cpu_count_chunks.py")


def test_a_probe_whose_module_is_imported_inside_forward_is_not_moved(repro: Path) -> None:
    """`import os` inside forward: a module-level statement could not see that name: nothing to move."""
    f = repro / "heldout3" / "cpu_count_chunks.py"
    src = f.read_text()
    # the module-level import moves into forward; the culprit stays on its line (15)
    f.write_text(src.replace("import os\n\nimport torch\n", "import torch\n")
                 .replace("    def forward(self, x):\n", "    def forward(self, x):\n        import os\n\n"))
    assert f.read_text().splitlines()[14].strip().startswith("n = max(")
    reason = needs_a_person(repro, "heldout3-cpu-count-chunks.log")
    assert "used further on" in reason


# --- a one-time set-up in forward: done in __init__ ---------------------------------------------------------


def test_a_hook_registered_once_in_forward_is_registered_in_init_instead(repro: Path) -> None:
    """`if self.handle is None: self.handle = self.inner.register_forward_hook(...)`: a guard would leave the hook
    unregistered under compile (a wrong result); the set-up uses nothing of the call, so it moves to the end of
    __init__. Left in forward, its test would make dynamo read the RemovableHandle it stored (torch 2.13 cannot
    represent one made in another frame): forward keeps only the call."""
    doc = plan(repro, "heldout3-hook-in-forward.log")
    assert doc["kind"] == "move-to-init"
    text = apply_and_read(repro, "heldout3-hook-in-forward.log", "heldout3/hook_in_forward.py")
    init = method(text, "__init__")
    last = init.body[-1]
    assert isinstance(last, ast.If) and ast.unparse(last.test) == "self.handle is None"
    assert "register_forward_hook" in ast.unparse(last.body[0])
    # the store of None comes before it, so the set-up runs
    assert [ast.unparse(st) for st in init.body].index("self.handle = None") < len(init.body) - 1
    fwd = method(text, "forward")
    assert [ast.unparse(st) for st in fwd.body] == ["return self.inner(x)"]
    assert reverted(repro, "heldout3/hook_in_forward.py")


def test_a_lazy_parameter_shaped_by_the_input_stays_in_forward(repro: Path) -> None:
    """`self.weight = nn.Parameter(torch.randn(out, x.shape[-1], ...))` needs the call's input: no __init__."""
    reason = needs_a_person(repro, "heldout2-lazy-param.log")
    assert "move-to-init" in reason and "(x)" in reason


def test_a_set_up_that_draws_random_numbers_is_not_moved_earlier(repro: Path) -> None:
    """Done in __init__, a draw would come before the caller's seeding: another result."""
    f = repro / "heldout3" / "hook_in_forward.py"
    src = f.read_text()
    line = "            self.handle = self.inner.register_forward_hook(lambda mod, inp, out: out.clamp(-0.5, 0.5))\n"
    assert line in src
    f.write_text(src.replace(line, line + "            self.noise = torch.randn(16)\n"))
    reason = needs_a_person(repro, "heldout3-hook-in-forward.log")
    assert "random" in reason


# --- torch.where only helps a branch on a tensor ----------------------------------------------------------


def test_a_branch_on_a_random_draw_is_not_rewritten_with_torch_where(repro: Path) -> None:
    """`if random.random() >= self.p: x = x + ...`: dynamo stopped at random.random, not at a branch on a
    tensor; torch.where over the same condition still calls it (it was planned, applied and did not help)."""
    reason = needs_a_person(repro, "heldout3-random-layerdrop.log")
    assert "random.random" in reason and "where" in reason


def test_a_branch_on_a_tensor_value_still_becomes_torch_where(repro: Path) -> None:
    assert plan(repro, "heldout-clip-branch.log")["kind"] == "where"


# --- a check that only copies: skipped under compile ---------------------------------------------------------


def test_an_alignment_check_that_only_copies_the_input_is_skipped_under_compile(repro: Path) -> None:
    """`if x.data_ptr() % 64 != 0 or not x.is_contiguous(): x = x.contiguous().clone()`: dynamo has no data
    pointer (torch 2.13 words it as an impossible TypeError). The branch gives x's own values, so under compile
    the check is skipped whole; torch.where has nothing to pick."""
    doc = plan(repro, "heldout3-aligned-input.log")
    assert doc["kind"] == "guard"
    text = apply_and_read(repro, "heldout3-aligned-input.log", "heldout3/aligned_input.py")
    fwd = method(text, "forward")
    guard = fwd.body[0]
    assert isinstance(guard, ast.If) and "is_compiling" in ast.unparse(guard.test)
    assert "data_ptr" in ast.unparse(guard.body[0].test)
    assert ast.unparse(fwd.body[-1]) == "return x @ self.w"
    assert reverted(repro, "heldout3/aligned_input.py")


def test_a_copy_that_is_changed_in_place_afterwards_is_not_skipped(repro: Path) -> None:
    """Without the clone, `x.mul_(2)` would change the caller's tensor: the check stays."""
    f = repro / "heldout3" / "aligned_input.py"
    src = f.read_text()
    f.write_text(src.replace("        return x @ self.w\n", "        x.mul_(2)\n        return x @ self.w\n"))
    p = cl("fix", str(LOGS / "heldout3-aligned-input.log"), "--format", "json", cwd=repro)
    import json

    doc = json.loads(p.stdout)
    assert doc.get("kind") != "guard"


# --- "the program's own failure" is signature data -----------------------------------------------------


def _observed_exception_log(tmp_path: Path) -> Path:
    import gzip

    log = tmp_path / "observed-exception.log"
    log.write_bytes(gzip.decompress((SAMPLES / "corpus" / "raw" / "t2.13.0" / "observed-exception.log.gz").read_bytes()))
    return log


def test_a_signature_tagged_program_raises_leaves_the_program_untouched_and_the_tag_is_what_says_so(
        repro: Path, tmp_path: Path) -> None:
    """torch 2.13 reports the program's own KeyError as torch._dynamo.exc.Unsupported ("Observed exception"): only
    the catalog's `program-raises` tag says it is the program's bug. A user catalog that drops the tag (same id)
    makes crashlens treat it as a compile failure again."""
    import json

    log = _observed_exception_log(tmp_path)
    p = cl("fix", str(log), "--format", "json", cwd=repro)
    doc = json.loads(p.stdout)
    assert p.returncode == 1 and doc["status"] == "needs-a-person" and doc["eager_too"] is True
    sig = str(doc["signature"])  # a KeyError the program raises: missing-dict-key
    sigs = tmp_path / "sigs"
    sigs.mkdir()
    src = (Path(__file__).resolve().parent.parent / "signatures" / f"{sig}.toml").read_text()
    assert '"program-raises"' in src
    (sigs / f"{sig}.toml").write_text(src.replace(', "program-raises"', ""))
    p = cl("fix", str(log), "--format", "json", cwd=repro, env={"CRASHLENS_SIGNATURES": str(sigs)})
    doc = json.loads(p.stdout)
    assert doc.get("eager_too") is not True


def test_signatures_check_rejects_program_raises_beside_a_fix_that_changes_compilation(tmp_path: Path) -> None:
    sigs = tmp_path / "sigs"
    sigs.mkdir()
    src = (Path(__file__).resolve().parent.parent / "signatures" / "observed-exception.toml").read_text()
    (sigs / "observed-exception.toml").write_text(src.replace('fixsets = ["disable-graph-break"',
                                                              'fixsets = ["opaque-op", "disable-graph-break"'))
    p = cl("signatures", "check", "--signatures", str(sigs), cwd=tmp_path)
    assert p.returncode != 0 and "program-raises" in p.stdout + p.stderr


# --- lines that compute one tensor in Python: an opaque op ------------------------------------------------


def test_a_histogram_of_token_ids_becomes_an_opaque_op_over_exactly_the_lines_that_make_the_tensor(repro: Path) -> None:
    """`counts = Counter(tokens.tolist())`, a loop filling `factors`, then `return logits * factors`: a guard would
    drop the penalty. The four lines compute one tensor (`factors`) from the input and two numbers of the
    object; they become a module-level function, run as an opaque custom op (derived fake), and forward keeps
    the rest (the multiplication stays in the graph)."""
    doc = plan(repro, "heldout3-token-histogram.log")
    assert doc["kind"] == "custom-op"
    text = apply_and_read(repro, "heldout3-token-histogram.log", "heldout3/token_histogram.py")
    fwd = method(text, "forward")
    assert [ast.unparse(st) for st in fwd.body][-1] == "return logits * factors"
    (call,) = [st for st in fwd.body if isinstance(st, ast.Assign)]
    assert ast.unparse(call.targets[0]) == "factors" and ast.unparse(call.value).endswith(
        "(tokens, self.vocab, self.penalty)")
    lines = method(text, "forward_lines_16")
    assert [ast.unparse(a.annotation) for a in lines.args.args] == ["torch.Tensor", "int", "float"]
    assert "Counter(tokens.tolist())" in ast.unparse(lines) and "self" not in ast.unparse(lines)
    shim = next(str(f) for f in doc["files"] if "_crashlens_" in str(f))  # type: ignore[union-attr]
    assert "custom_op(" in (repro / shim).read_text() and "DERIVED" in (repro / shim).read_text()
    assert reverted(repro, "heldout3/token_histogram.py") and not (repro / shim).exists()


def test_a_numpy_generator_made_and_drawn_from_in_forward_goes_into_the_op_with_its_draw(repro: Path) -> None:
    """`rng = np.random.default_rng(0)` (the culprit) and `noise = torch.from_numpy(rng.standard_normal(...))`:
    the generator is no tensor, the noise is; both lines go into the op, and x's use stays in the graph."""
    text = apply_and_read(repro, "heldout2-numpy-noise.log", "heldout2/numpy_noise.py")
    fwd = method(text, "forward")
    assert "rng" not in ast.unparse(fwd)
    assert ast.unparse(fwd.body[-1]) == "return self.fc(x + 0.01 * noise)"
    assert "default_rng(0)" in ast.unparse(method(text, "forward_lines_14"))
    assert reverted(repro, "heldout2/numpy_noise.py")


def test_a_generator_made_for_one_draw_goes_into_the_op_with_that_draw_only(repro: Path) -> None:
    """`g = torch.Generator().manual_seed(self.seed)`, then `return self.fc(x) + 0.01 * torch.randn(x.shape,
    generator=g)`: a generator is no tensor, but the one call that takes it makes one. The op holds the
    generator and that call; `self.fc` and the sum stay in the graph."""
    text = apply_and_read(repro, "heldout2-generator-noise.log", "heldout2/generator_noise.py")
    fwd = method(text, "forward")
    assert len(fwd.body) == 1 and ast.unparse(fwd.body[0]).startswith("return self.fc(x) + 0.01 * ")
    assert ast.unparse(fwd.body[0]).endswith(".forward_lines_14(x, self.seed)")
    lines = ast.unparse(method(text, "forward_lines_14"))
    assert "torch.Generator().manual_seed(seed)" in lines and "return torch.randn(x.shape, generator=g)" in lines
    assert reverted(repro, "heldout2/generator_noise.py")


def test_no_op_is_made_when_no_tensor_comes_out_of_the_lines(repro: Path) -> None:
    """`u = random.random()`, then `return ratio > u`: the draw feeds a comparison, not a call that makes a
    tensor, and an op over the return would take the whole function: a person decides."""
    p = cl("fix", str(SAMPLES / "raw" / "random-call.log"), "--format", "json", cwd=repro)
    import json

    doc = json.loads(p.stdout)
    assert doc["status"] == "needs-a-person" and "one tensor" in str(doc["reason"])


def test_a_newton_loop_that_stops_on_item_becomes_an_op_over_the_loop(repro: Path) -> None:
    """`for _ in range(50): ... if (nxt - r).abs().max().item() < tol: break`: the loop computes `r` from `v`
    and `r`, computed before it (tensors), and `tol` (a float default): the loop is the op."""
    text = apply_and_read(repro, "heldout2-newton-rsqrt.log", "heldout2/newton_rsqrt.py")
    lines = method(text, "forward_lines_11")
    assert {a.arg: ast.unparse(a.annotation) for a in lines.args.args} == {
        "r": "torch.Tensor", "tol": "float", "v": "torch.Tensor"}
    assert ast.unparse(method(text, "forward").body[-1]) == "return x * r"
    assert reverted(repro, "heldout2/newton_rsqrt.py")


def test_lines_that_change_their_input_in_place_are_no_op(repro: Path) -> None:
    f = repro / "heldout3" / "token_histogram.py"
    src = f.read_text()
    old = "            factors[tok] = self.penalty ** n\n"
    assert old in src
    f.write_text(src.replace(old, old + "            tokens.add_(0)\n"))
    reason = needs_a_person(repro, "heldout3-token-histogram.log")
    assert "in place" in reason


# --- a time budget: not checked under compile ----------------------------------------------------------


def test_a_time_budget_that_only_ends_a_loop_is_checked_in_eager_only(repro: Path) -> None:
    """`t0 = time.perf_counter()` ... `if time.perf_counter() - t0 > self.budget_s: break`: the reading steers only
    a loop exit. Both are skipped under compile (every layer runs, as eager does within budget), the note says
    the budget is not checked there, and the layers stay in the graph."""
    doc = plan(repro, "heldout3-perf-budget.log")
    assert doc["kind"] == "guard"
    assert any("budget is not checked" in str(n) for n in doc["notes"])  # type: ignore[union-attr]
    text = apply_and_read(repro, "heldout3-perf-budget.log", "heldout3/perf_budget.py")
    fwd = method(text, "forward")
    guards = [n for n in ast.walk(fwd) if isinstance(n, ast.If) and "is_compiling" in ast.unparse(n.test)]
    assert len(guards) == 2
    assert "perf_counter" in ast.unparse(guards[0].body[0]) and isinstance(guards[1].body[0].body[0], ast.Break)
    loop = next(n for n in fwd.body if isinstance(n, ast.For))
    assert ast.unparse(loop.body[0]) == "x = torch.tanh(layer(x))"
    assert reverted(repro, "heldout3/perf_budget.py")


def test_a_clock_reading_that_changes_a_value_is_not_skipped(repro: Path) -> None:
    """The same budget, but its branch changes x instead of leaving the loop: skipping it would change x."""
    f = repro / "heldout3" / "perf_budget.py"
    src = f.read_text()
    assert "                break\n" in src
    f.write_text(src.replace("                break\n", "                x = x * 0.5\n"))
    reason = needs_a_person(repro, "heldout3-perf-budget.log")
    assert "used further on" in reason


# --- a Parameter made in forward: the tensor it wraps ------------------------------------------------------


def _gz_log(tmp_path: Path, release: str, name: str) -> Path:
    import gzip

    log = tmp_path / f"{release}-{name}.log"
    log.write_bytes(gzip.decompress((SAMPLES / "corpus" / "raw" / release / f"{name}.log.gz").read_bytes()))
    return log


def test_a_parameter_built_in_forward_and_only_computed_with_becomes_the_plain_tensor(repro: Path, tmp_path: Path) -> None:
    """`scale = torch.nn.Parameter(torch.ones(x.shape[-1]))`, then `... * scale`: a new leaf on every call that
    nothing registers or trains. The same values without the wrapper, on torch 2.13 as on 2.1."""
    for release in ("t2.13.0", "t2.1.2"):
        log = _gz_log(tmp_path, release, "parameter-in-forward")
        p = cl("fix", str(log), "--apply", cwd=repro)
        assert p.returncode == 0, p.stdout + p.stderr
        fwd = method((repro / "scenarios" / "parameter_in_forward.py").read_text(), "forward")
        assert ast.unparse(fwd.body[0]) == "scale = torch.ones(x.shape[-1])"
        assert "Parameter" not in ast.unparse(fwd)
        assert reverted(repro, "scenarios/parameter_in_forward.py")


def test_a_parameter_built_in_forward_and_kept_on_the_object_stays_a_parameter(repro: Path, tmp_path: Path) -> None:
    f = repro / "scenarios" / "parameter_in_forward.py"
    src = f.read_text()
    line = "        scale = torch.nn.Parameter(torch.ones(x.shape[-1]))  # expect: parameter\n"
    assert line in src
    f.write_text(src.replace(line, line + "        self.last_scale = scale\n"))
    p = cl("fix", str(_gz_log(tmp_path, "t2.13.0", "parameter-in-forward")), "--format", "json", cwd=repro)
    import json

    doc = json.loads(p.stdout)
    assert doc.get("kind") != "plain-tensor"
    assert "plain-tensor" in str(doc.get("reason")) and "kept or passed on" in str(doc.get("reason"))


def test_no_op_over_lines_whose_output_shape_depends_on_the_values(repro: Path, tmp_path: Path) -> None:
    """`torch.bincount(ids)` (torch 2.4, 2.7: a dynamic output shape): a fake derived from one run would give a
    wrong shape; shapes.toml lists such functions and the op over those lines is not made."""
    for name, fn in (("bincount-dynamic", "bincount"), ("nonzero-dynamic", "nonzero")):
        p = cl("fix", str(_gz_log(tmp_path, "t2.4.1", name)), "--format", "json", cwd=repro)
        import json

        doc = json.loads(p.stdout)
        assert doc["status"] == "needs-a-person", doc
        assert f"`{fn}`, whose output shape depends on the values" in str(doc["reason"])


def test_an_op_over_lines_checks_at_trace_time_that_its_shape_does_not_follow_the_values(repro: Path) -> None:
    """A boolean mask or anything else no list names: the derived fake runs the lines on zeros and on ones and
    stops the trace, saying why, when the shapes differ (instead of a fake of the wrong shape)."""
    doc = plan(repro, "heldout3-token-histogram.log")
    shim = next(str(f) for f in doc["files"] if "_crashlens_" in str(f))  # type: ignore[union-attr]
    cl("fix", str(LOGS / "heldout3-token-histogram.log"), "--apply", cwd=repro)
    fake = ast.unparse(method((repro / shim).read_text(), "_fake"))
    assert "torch.ones_like(a)" in fake and "depends on the values of its inputs" in fake
    assert reverted(repro, "heldout3/token_histogram.py")
    # an opaque op of a library's entry point (a known function, called as it is) has no such check
    doc = plan(repro, "heldout2-adapter-json.log")
    assert "ones_like" not in str(doc["diff"])


def test_signatures_check_validates_the_patch_data_the_planner_reads() -> None:
    from crashlens import fixplan
    from crashlens.sigcheck import patch_problems

    assert patch_problems() == []
    consts = fixplan.process_constants()
    consts.append({"call": "cpu_count", "why": "no module"})
    fixplan.clocks().append({"call": "time.perf_counter", "dynamo": ["not dotted"]})
    try:
        problems = patch_problems()
    finally:
        consts.pop()
        fixplan.clocks().pop()
    assert any("[[constant]] call 'cpu_count'" in p for p in problems)
    assert any("[[clock]] time.perf_counter: field 'dynamo'" in p for p in problems)


# --- the same mechanisms, in the forms the recorded programs do not use -----------------------------------


def _diagnosis(log: str):  # type: ignore[no-untyped-def]
    from crashlens.cli.scan import run_scan

    return next(d for d in run_scan((str(LOGS / log),), (), False).diagnoses if d.fatal)


def test_a_probe_whose_argument_is_a_module_attribute_is_read_once_at_module_level(repro: Path, monkeypatch) -> None:  # type: ignore[no-untyped-def]
    """`ctypes.sizeof(ctypes.c_void_p)` (a C type is no run-time value) moves like `os.cpu_count()`; the same
    call with a local value does not."""
    from crashlens._struct import replace
    from crashlens.fixplan import Locator, Plan, forget_files, plan_fix

    monkeypatch.chdir(repro)
    f = repro / "heldout3" / "cpu_count_chunks.py"
    src = f.read_text()
    f.write_text(src.replace("import os\n", "import ctypes\n").replace(
        "min(os.cpu_count() or 1, x.shape[0])", "min(ctypes.sizeof(ctypes.c_void_p), x.shape[0])"))
    d = _diagnosis("heldout3-cpu-count-chunks.log")
    # the program is not the one recorded: its frames are read from the file, not checked against the log
    d = replace(d, callee="_ctypes.sizeof", chain=tuple(replace(f, source=None) for f in d.chain),
                culprit=replace(d.culprit, source=None))
    forget_files()
    p = plan_fix(d, Locator([str(repro)], []), "2.13.0")
    assert isinstance(p, Plan) and p.kind == "move-to-module", p
    after = p.edits[0].after
    assert "_CRASHLENS_CTYPES_SIZEOF = ctypes.sizeof(ctypes.c_void_p)" in after
    f.write_text(src.replace("min(os.cpu_count() or 1, x.shape[0])", "min(os.cpu_count(x.shape[0]) or 1, 2)"))
    forget_files()
    d = replace(d, callee="posix.cpu_count")
    p = plan_fix(d, Locator([str(repro)], []), "2.13.0")
    assert not (isinstance(p, Plan) and p.kind == "move-to-module"), p


def test_a_clock_inside_an_expression_is_still_a_clock_reading() -> None:
    from crashlens.fixplan import _reads_clock

    tree = ast.parse("import time as t\nfrom time import monotonic\n")
    assert _reads_clock(ast.parse("deadline = t.monotonic() + budget").body[0], tree)
    assert _reads_clock(ast.parse("start = monotonic()").body[0], tree)
    assert not _reads_clock(ast.parse("n = len(t.tzname)").body[0], tree)


def test_a_lazy_set_up_tested_with_getattr_moves_to_init_too(repro: Path) -> None:
    f = repro / "heldout3" / "hook_in_forward.py"
    src = f.read_text()
    assert "        if self.handle is None:\n" in src
    f.write_text(src.replace("        if self.handle is None:\n", '        if getattr(self, "handle", None) is None:\n'))
    assert plan(repro, "heldout3-hook-in-forward.log")["kind"] == "move-to-init"


def test_no_op_over_lines_of_a_library_the_user_calls(repro: Path, tmp_path: Path) -> None:
    """fakeinfer's FusedNorm builds its weight in forward: the culprit is the library's, reached from the user's
    call; an op over the library's own lines would be a library patch no one asked for."""
    p = cl("fix", str(_gz_log(tmp_path, "t2.13.0", "lib-parameter")), "--format", "json", cwd=repro)
    import json

    doc = json.loads(p.stdout)
    assert doc["status"] == "needs-a-person" and "region-op" not in str(doc["reason"])


def test_an_op_over_lines_takes_a_buffer_of_the_object_as_a_tensor_and_never_changes_it(repro: Path) -> None:
    """`factors = self.base.clone()` with `self.register_buffer("base", ...)` in __init__: the buffer is passed
    to the op as a tensor; `self.base.mul_(...)` in the lines would change the object: no op."""
    f = repro / "heldout3" / "token_histogram.py"
    src = f.read_text()
    init_line = "        self.penalty = penalty\n"
    assert init_line in src and "        factors = torch.ones(self.vocab)\n" in src
    src = src.replace(init_line, '        self.penalty = penalty; self.register_buffer("base", torch.ones(vocab))\n')
    f.write_text(src.replace("        factors = torch.ones(self.vocab)\n", "        factors = self.base.clone()\n"))
    doc = plan(repro, "heldout3-token-histogram.log")
    assert doc["kind"] == "custom-op"
    assert "base: torch.Tensor" in str(doc["diff"]) and ", self.base, self.penalty)" in str(doc["diff"])
    f.write_text(f.read_text().replace("        factors = self.base.clone()\n",
                                       "        factors = self.base.mul_(1.0)\n"))
    assert "in place" in needs_a_person(repro, "heldout3-token-histogram.log")


def test_a_first_call_report_is_not_moved_to_init(repro: Path) -> None:
    """`if self.handle is None:` whose block also prints: a report of the first call, not a set-up; done in
    __init__ it would print when the object is built."""
    f = repro / "heldout3" / "hook_in_forward.py"
    src = f.read_text()
    line = "            self.handle = self.inner.register_forward_hook(lambda mod, inp, out: out.clamp(-0.5, 0.5))\n"
    f.write_text(src.replace(line, line + '            print("hook registered")\n'))
    p = cl("fix", str(LOGS / "heldout3-hook-in-forward.log"), "--format", "json", cwd=repro)
    import json

    assert json.loads(p.stdout).get("kind") != "move-to-init"


def test_a_probe_printed_for_its_own_sake_is_left_to_the_guard(repro: Path) -> None:
    """`print(os.cpu_count())` would move the count and keep a print dynamo cannot trace: the guard skips the
    report whole, in one round."""
    from crashlens._struct import replace
    from crashlens.fixplan import Locator, Plan, forget_files, plan_fix

    f = repro / "heldout3" / "cpu_count_chunks.py"
    src = f.read_text()
    f.write_text(src.replace("        n = max(1, min(os.cpu_count() or 1, x.shape[0]))\n",
                             "        print(os.cpu_count())\n        n = 2\n"))
    d = _diagnosis("heldout3-cpu-count-chunks.log")
    d = replace(d, chain=tuple(replace(fr, source=None) for fr in d.chain), culprit=replace(d.culprit, source=None))
    forget_files()
    import os

    old = os.getcwd()
    os.chdir(repro)
    try:
        p = plan_fix(d, Locator([str(repro)], []), "2.13.0")
    finally:
        os.chdir(old)
    assert isinstance(p, Plan) and p.kind == "guard", p
