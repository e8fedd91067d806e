"""`crashlens fix` on crashes of the sixth held-out batch (samples/repro/heldout5), from their recorded logs
(samples/fix/heldout5-*.log), without torch: what the misses of that batch showed about the planner."""

from __future__ import annotations

import ast
import json
import os
import sys
from pathlib import Path

import pytest

from conftest import SAMPLES, cl, plan

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


def test_dynamo_s_own_assertion_is_not_called_a_bug_in_the_program(repro: Path) -> None:
    """`weakref.finalize(req, ...)` in forward: dynamo's guard on `weakref.finalize._registry` failed on the frame
    that made it (an AssertionError raised in torch/_dynamo/guards.py, "This is a bug"). The exception's type is
    a plain one, but the program did not raise it: it is not reported as failing in eager too."""
    p = cl("fix", str(LOGS / "heldout5-finalize.log"), "--format", "json", cwd=repro)
    doc = json.loads(p.stdout)
    assert p.returncode == 1 and doc["status"] == "needs-a-person"
    assert doc["eager_too"] is False and "raised by the program itself" not in doc["reason"]
    assert (repro / "heldout5" / "finalize_free_slots.py").read_bytes() == \
        (REPRO / "heldout5" / "finalize_free_slots.py").read_bytes()


def test_a_fake_of_the_wrong_shape_is_replaced_by_one_derived_from_the_real_kernel(repro: Path) -> None:
    """Inductor's check of `heldout5::pair_max`'s real output (`assert_size_stride` in its generated code) failed:
    the op's `register_fake` returned `empty_like(x)` for an op that halves the last dimension. The log names
    only the op and inductor's cache file; the op is found in the program's files, a derived fake is registered
    after the wrong one (so it replaces it), and inductor's generated code is never touched."""
    rel = "heldout5/fake_shape_default.py"
    p = cl("fix", str(LOGS / "heldout5-fake-shape.log"), "--apply", "--format", "json", cwd=repro)
    assert p.returncode == 0, p.stdout + p.stderr
    assert "torchinductor" not in p.stdout
    lines = (repro / rel).read_text().splitlines()
    imp = lines.index("import _crashlens_fake_heldout5_pair_max  # crashlens fix (revert: crashlens fix --revert)")
    fake_at = lines.index("@pair_max.register_fake")
    assert imp > fake_at + 2  # after the wrong fake's def, which it replaces
    shim = (repro / "heldout5" / "_crashlens_fake_heldout5_pair_max.py").read_text()
    assert 'torch.library.register_fake("heldout5::pair_max")(_fake)' in shim and "DERIVED" in shim
    # torch's compile caches do not key on the fake: the code compiled with the wrong one must not be served again
    assert "torch.compiler.config.cache_key_tag" in shim.split('register_fake("heldout5::pair_max")(_fake)')[1]
    assert reverted(repro, rel) and not (repro / "heldout5" / "_crashlens_fake_heldout5_pair_max.py").exists()


def test_a_wrong_fake_is_never_fixed_by_skipping_inductor_s_check(repro: Path) -> None:
    """Where the fake cannot be replaced (torch before 2.13 has no register_fake that replaces a registered
    fake), the answer is "needs a person": no guard around inductor's size check, no other change, and it is
    not called a bug of the program although its exception is a plain AssertionError."""
    p = cl("fix", str(LOGS / "heldout5-fake-shape.log"), "--torch", "2.7", "--format", "json", cwd=repro)
    doc = json.loads(p.stdout)
    assert p.returncode == 1 and doc["status"] == "needs-a-person" and doc["eager_too"] is False
    assert doc["reason"].startswith("register-fake: no `override-fake` template for torch 2.7")
    assert (repro / "heldout5" / "fake_shape_default.py").read_bytes() == \
        (REPRO / "heldout5" / "fake_shape_default.py").read_bytes()


def test_two_files_defining_the_op_leave_the_choice_to_a_person(repro: Path) -> None:
    """The op is found by its name among the program's files: when two define it, which fake is wrong is not
    known, and nothing is changed."""
    src = (repro / "heldout5" / "fake_shape_default.py").read_text()
    (repro / "heldout5" / "pair_max_copy.py").write_text(src)
    p = cl("fix", str(LOGS / "heldout5-fake-shape.log"), "--format", "json", cwd=repro)
    doc = json.loads(p.stdout)
    assert doc["status"] == "needs-a-person" and "several files here define `heldout5::pair_max`" in doc["reason"]


def test_a_fake_for_an_op_defined_through_a_library_object_is_imported_after_its_definition(repro: Path) -> None:
    """`_lib = torch.library.Library("heldout5", "DEF")`, `_lib.define("rms_scale(...)")`, `_lib.impl("rms_scale",
    ...)`: the file never writes "heldout5::rms_scale". The shim was imported before the define, and the program
    stopped at import ("operator heldout5::rms_scale does not exist"); it is now imported after the impl."""
    rel = "heldout5/libdef_no_meta.py"
    apply(repro, "heldout5-libdef-no-meta.log")
    lines = (repro / rel).read_text().splitlines()
    imp = lines.index("import _crashlens_fake_heldout5_rms_scale  # crashlens fix (revert: crashlens fix --revert)")
    assert imp > max(i for i, ln in enumerate(lines) if ln.startswith(("_lib.define(", "_lib.impl(")))
    assert reverted(repro, rel)


# A stand-in for `python heldout5/mx_kv_roundtrip.py`: the recorded crash of round 1 (mxfp4_quantize reaches the
# loader's subprocess probe) until the quantize calls go through the shim, then the recorded crash of round 2
# (mxfp4_dequantize, another entry point, reaches the same probe) until those do too; then the result.
MX_REPLAY = """
import os, sys
src = open(os.path.join("heldout5", "mx_kv_roundtrip.py")).read()
if os.environ.get("TORCHDYNAMO_DISABLE") == "1":
    print("result: eager"); sys.exit(0)
if "mxkern.mxfp4_quantize(" in src:
    sys.stdout.write(open(sys.argv[1], encoding="utf-8").read()); sys.exit(1)
if "mxkern.mxfp4_dequantize(" in src:
    sys.stdout.write(open(sys.argv[2], encoding="utf-8").read()); sys.exit(1)
print("result: eager")
"""


def test_every_entry_point_of_the_library_through_the_same_loader_is_an_op_in_the_same_round(repro: Path) -> None:
    """Round 1 crashes in mxkern's loader below `mxfp4_quantize`; forward also calls `mxfp4_dequantize`, which
    goes through the same `_load` (read statically from the package). Both become opaque ops in one plan
    (`mxfp4_dequantize`'s `dtype=torch.float32` default kept by the shim's wrapper), so the replayed program,
    which would crash in the loader again from dequantize, runs in round 2: the chain ends after one fix."""
    (repro / "replay_mx.py").write_text(MX_REPLAY)
    p = cl("run", "--fix", "--format", "json", "--", sys.executable, "replay_mx.py",
           str(LOGS / "heldout5-mx-kv-round-1.log"), str(LOGS / "heldout5-mx-kv-round-2.log"), cwd=repro)
    doc = json.loads(p.stdout)
    assert [r["outcome"] for r in doc["rounds"]] == ["fixed", "converged"], doc["rounds"]
    assert p.returncode == 0
    files = doc["rounds"][0]["fix"]["files"]
    assert sorted(Path(f).name for f in files) == ["_crashlens_mx_kv_roundtrip_mxfp4_dequantize.py",
                                                  "_crashlens_mx_kv_roundtrip_mxfp4_quantize.py", "mx_kv_roundtrip.py"]
    shim = (repro / "heldout5" / "_crashlens_mx_kv_roundtrip_mxfp4_dequantize.py").read_text()
    assert "def mxfp4_dequantize(packed, scales, dtype=torch.float32):" in shim
    assert "(Tensor packed, Tensor scales, ScalarType dtype) -> Tensor" in shim
    src = (repro / "heldout5" / "mx_kv_roundtrip.py").read_text()
    assert calls_of(src, "mxkern.mxfp4_quantize") == calls_of(src, "mxkern.mxfp4_dequantize") == []
    assert reverted(repro, "heldout5/mx_kv_roundtrip.py")
    assert not list((repro / "heldout5").glob("_crashlens_*"))


def test_keyword_calls_of_both_entry_points_are_ops_after_one_fix(repro: Path) -> None:
    """`mxfp4_quantize(h, block_size=32, scale_format="e8m0")` then `mxfp4_dequantize(packed, scales,
    dtype=torch.bfloat16)`: both ops in the one plan, each keyword passed through the op."""
    doc = plan(repro, "heldout5-mx-quant-kwargs.log")
    assert doc["kind"] == "custom-op" and "mxfp4_dequantize" in str(doc["title"]), doc["title"]
    apply(repro, "heldout5-mx-quant-kwargs.log")
    src = (repro / "heldout5" / "mx_quant_kwargs.py").read_text()
    assert calls_of(src, "mxkern.mxfp4_dequantize") == []
    (deq,) = calls_of(src, "_crashlens_mx_quant_kwargs_mxfp4_dequantize.mxfp4_dequantize")
    assert ast.unparse(deq.keywords[0]) == "dtype=torch.bfloat16"
    assert reverted(repro, "heldout5/mx_quant_kwargs.py")


def test_a_library_function_that_is_not_reached_through_the_loader_is_left_a_library_call(repro: Path) -> None:
    """Only the entry points whose code reaches a frame below the entry in the crash become ops: a helper of
    the same package that never goes through the loader keeps calling the library."""
    f = repro / "heldout5" / "mx_kv_roundtrip.py"
    pkg = repro / "heldout5" / "site-packages" / "mxkern"
    (pkg / "__init__.py").write_text((pkg / "__init__.py").read_text() + "\n\ndef block_count(x):\n"
                                     "    return x.new_tensor(x.shape[-1] // 32)\n")
    f.write_text(f.read_text().replace("        return k, v, k_scales\n",
                                       "        return k + mxkern.block_count(x).float(), v, k_scales\n"))
    doc = plan(repro, "heldout5-mx-kv-round-1.log")
    assert "mxfp4_dequantize" in str(doc["title"]) and "block_count" not in str(doc["title"])
    assert "_crashlens_mx_kv_roundtrip_block_count" not in str(doc["diff"])
    assert "         return k + mxkern.block_count(x).float(), v, k_scales" in str(doc["diff"]).splitlines()


def test_out_buffers_are_written_by_the_shim_not_passed_into_the_op(repro: Path) -> None:
    """`mxkern.mxfp4_quantize(h, out=(packed, scales))` into buffers made in forward: an op may not write its
    inputs undeclared, nor return them. The op computes new tensors (the library called without `out`), its
    schema says two of them (the two buffers), and the shim's wrapper, which dynamo traces, copies them into
    the buffers and gives those back."""
    doc = plan(repro, "heldout5-mx-out-prealloc.log")
    assert doc["kind"] == "custom-op"
    apply(repro, "heldout5-mx-out-prealloc.log")
    shim = (repro / "heldout5" / "_crashlens_mx_out_prealloc_mxfp4_quantize.py").read_text()
    assert '(Tensor x, SymInt block_size=32, str scale_format=\\"e8m0\\") -> (Tensor, Tensor)' in shim
    tree = ast.parse(shim)
    wrapper = next(n for n in tree.body if isinstance(n, ast.FunctionDef) and n.name == "mxfp4_quantize")
    assert [a.arg for a in wrapper.args.args] == ["x", "block_size", "scale_format", "out"]
    assert "o.copy_(r)" in ast.unparse(wrapper)
    invoke = next(n for n in tree.body if isinstance(n, ast.FunctionDef) and n.name == "_invoke")
    assert "out = None" in ast.unparse(invoke)
    src = (repro / "heldout5" / "mx_out_prealloc.py").read_text()
    (c,) = calls_of(src, "_crashlens_mx_out_prealloc_mxfp4_quantize.mxfp4_quantize")
    assert ast.unparse(c.keywords[0]) == "out=(packed, scales)"
    assert reverted(repro, "heldout5/mx_out_prealloc.py")


def test_the_same_crash_through_the_same_frames_still_stops_the_rounds(repro: Path) -> None:
    """A fix that does not help: round 2 replays round 1's crash exactly (the same frames); it stops there."""
    (repro / "always_mx.py").write_text(
        "import os, sys\nif os.environ.get('TORCHDYNAMO_DISABLE') == '1':\n    sys.exit(0)\n"
        "sys.stdout.write(open(sys.argv[1], encoding='utf-8').read())\nsys.exit(1)\n")
    p = cl("run", "--fix", "--format", "json", "--", sys.executable, "always_mx.py",
           str(LOGS / "heldout5-mx-kv-round-1.log"), cwd=repro)
    doc = json.loads(p.stdout)
    assert p.returncode == 1 and [r["outcome"] for r in doc["rounds"]] == ["fixed", "needs-a-person"]
    assert "did not help" in doc["rounds"][-1]["reason"]
    assert cl("fix", "--revert", cwd=repro).returncode == 0


def _fatal(log: str):  # type: ignore[no-untyped-def]
    from crashlens.cli.scan import run_scan

    return next(d for d in run_scan((str(LOGS / log),), (), False).diagnoses if d.fatal)


def test_reseeding_under_fork_rng_is_never_skipped_under_compile(repro: Path) -> None:
    """`with torch.random.fork_rng(): torch.manual_seed(seed); noise = torch.randn(...)`: dynamo cannot enter
    fork_rng. Entered only in eager (a nullcontext under compile), and then the reseeding guarded, the program
    "compiled" with noise from another stream (and a reseeded global stream for the rest of the program). The
    three lines become one opaque op instead: at run time they fork, seed and draw as eager does."""
    doc = plan(repro, "heldout5-fork-rng-noise.log")
    assert doc["kind"] == "custom-op", doc
    assert "is_compiling" not in str(doc["diff"])
    apply(repro, "heldout5-fork-rng-noise.log")
    text = (repro / "heldout5" / "fork_rng_noise.py").read_text()
    tree = ast.parse(text)
    fwd = next(n for n in ast.walk(tree) if isinstance(n, ast.FunctionDef) and n.name == "forward")
    assert calls_of(ast.unparse(fwd), "torch.random.fork_rng") == calls_of(ast.unparse(fwd), "torch.manual_seed") == []
    op = next(n for n in tree.body if isinstance(n, ast.FunctionDef) and n.name.startswith("forward_lines_"))
    body = ast.unparse(op)
    assert body.index("fork_rng") < body.index("manual_seed(seed)") < body.index("randn")
    assert reverted(repro, "heldout5/fork_rng_noise.py")


def test_a_guard_never_skips_a_call_that_reseeds_a_random_stream(repro: Path, monkeypatch) -> None:  # type: ignore[no-untyped-def]
    """Round 2 of the old plan (recorded with fork_rng entered in a nullcontext under compile): dynamo stops at
    `torch.manual_seed(seed)`. The guard planner refuses it, and says what reads the stream later."""
    from crashlens import fixplan

    monkeypatch.chdir(repro)
    f = repro / "heldout5" / "fork_rng_noise.py"
    f.write_text(f.read_text().replace(
        "import torch\n", "import torch\nimport contextlib\n", 1).replace(
        "with torch.random.fork_rng(devices=[]):",
        "with (torch.random.fork_rng(devices=[]) if not torch.compiler.is_compiling() else contextlib.nullcontext()):"))
    d = _fatal("heldout5-fork-rng-round-2.log")
    fixplan.forget_files()
    monkeypatch.setattr(fixplan, "_order", lambda d, library=False: ["guard"])
    p = fixplan.plan_fix(d, fixplan.Locator([str(repro)], []), "2.13.0")
    assert isinstance(p, fixplan.NoPlan), p
    assert "torch.manual_seed" in p.reason and "random stream" in p.reason
    monkeypatch.undo()
    fixplan.forget_files()
    p = fixplan.plan_fix(d, fixplan.Locator([str(repro)], []), "2.13.0")
    assert not (isinstance(p, fixplan.Plan) and p.kind == "guard"), p


def test_a_guarded_statement_that_changes_what_later_code_reads_is_refused() -> None:
    """The general rule behind the reseeding one: a statement skipped under compile must not change state that
    code outside it reads (a container it fills that the function reads after, a module global another function
    reads); bookkeeping that nothing reads stays guardable."""
    from crashlens.fixplan import _state_read_later, _state_write

    def check(src: str, line: int) -> str | None:
        tree = ast.parse(src)
        fn = next(n for n in ast.walk(tree) if isinstance(n, ast.FunctionDef) and n.name == "forward")
        st = next(n for n in ast.walk(fn) if isinstance(n, ast.stmt) and n.lineno == line and n is not fn)
        return _state_read_later(tree, fn, [st])

    seen = "class M:\n    def forward(self, x, k):\n        self.seen.add(k)\n        return x * len(self.seen)\n"
    assert check(seen, 3) is not None
    history = "class M:\n    def forward(self, x):\n        self.history.append(x.tolist())\n        return x\n"
    assert check(history, 3) is None
    step = ("_STEP = 0\ndef forward(x):\n    global _STEP\n    _STEP += 1\n    return x\n"
            "def schedule():\n    return 0.9 ** _STEP\n")
    assert check(step, 4) is not None
    cast = "class M:\n    def forward(self, x):\n        self.to(x.dtype)\n        return self.proj(x)\n"
    assert check(cast, 3) is not None  # the module's own parameters change dtype
    copy = "class M:\n    def forward(self, x):\n        y = x.float()\n        return x\n"
    assert check(copy, 3) is None  # a new tensor: nothing changed in place
    tree = ast.parse("import numpy as np\nfrom torch.random import fork_rng\n")
    assert _state_write([ast.parse("np.random.seed(0)")], tree) is not None
    assert _state_write([ast.parse("g.manual_seed(1)")], tree) is not None
    assert _state_write([ast.parse("fork_rng(devices=[])")], tree) is not None
    assert _state_write([ast.parse("print(np.random.rand())")], tree) is None


def _digest(root: Path) -> dict[str, bytes]:
    return {str(p.relative_to(root)): p.read_bytes() for p in sorted(root.rglob("*"))
            if p.is_file() and "__pycache__" not in p.parts}


@pytest.mark.parametrize("log", [LOGS / "next-no-default.log", SAMPLES / "raw" / "issue13" / "2.13.0" / "zip-strict.log",
                                 SAMPLES / "raw" / "issue13" / "2.13.0" / "next-no-default.log",
                                 SAMPLES / "raw" / "issue13" / "2.7.1" / "next-no-default.log"])
def test_an_exception_dynamo_saw_the_program_raise_is_left_to_the_program_s_author(repro: Path, log: Path) -> None:
    """`next(gen)` on an empty generator, `zip(..., strict=True)` over unequal lengths: dynamo reports
    "Observed exception" (StopIteration / ValueError raised at the user's line), which eager raises too. Without
    an eager run to ask, `crashlens fix LOG` reads that off the log: needs a person, the code fix first, exit 1,
    nothing written (it used to make the failing lines an opaque op, which fails the same way at run time)."""
    before = _digest(repro)
    p = cl("fix", str(log), "--apply", cwd=repro)
    assert p.returncode == 1, p.stdout + p.stderr
    assert "needs a person" in p.stderr and "fails without torch.compile too" in p.stderr
    advice = p.stderr.split("ranked advice:", 1)[1].splitlines()[1]
    assert "next() a default" in advice or "same length" in advice, advice
    assert _digest(repro) == before and not (repro / ".crashlens").exists()
    doc = json.loads(cl("fix", str(log), "--format", "json", cwd=repro).stdout)
    assert doc["status"] == "needs-a-person" and doc["eager_too"] is True


@pytest.mark.parametrize("log", ["heldout5-resize-kv-buffer.log", "heldout5-lazy-dtype-cast.log"])
def test_a_statement_that_changes_the_object_the_rest_of_forward_reads_is_not_guarded(repro: Path, log: str) -> None:
    """`self.kv.resize_(n, d)` before `self.kv[:n] = ...`; `self.to(x.dtype)` before `self.proj(x)`: guarded,
    the compiled forward would write past the old buffer or multiply float64 inputs by float32 weights (a second
    crash after a "fix", or other values). No guard: the lines become an op over the object, or a person's."""
    p = cl("fix", str(LOGS / log), "--format", "json", cwd=repro)
    doc = json.loads(p.stdout)
    assert doc.get("kind") != "guard" and "is_compiling" not in str(doc.get("diff", "")), doc
    if doc["status"] == "needs-a-person":
        assert "which line" in doc["reason"] and "reads" in doc["reason"], doc["reason"]


def test_signatures_check_validates_the_state_table() -> None:
    """signatures/patches/state.toml is data the guard planner trusts: `crashlens signatures check` rejects an
    entry with no name, no reader, or a call that is not module.function."""
    from crashlens import fixplan
    from crashlens.sigcheck import patch_problems

    assert patch_problems() == []
    fixplan.process_state().append({"name": "bad", "calls": ["manual_seed"]})
    try:
        problems = patch_problems()
    finally:
        fixplan.process_state().pop()
    assert any("[[state]] 'bad': field 'read_by'" in p for p in problems)
    assert any("[[state]] 'bad': field 'calls'" in p for p in problems)
