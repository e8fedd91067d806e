"""`crashlens fix` on crashes of the fifth held-out batch (samples/repro/heldout4), from their recorded logs
(samples/fix/heldout4-*.log), without torch: what the misses of that batch showed about the opaque-op planner."""

from __future__ import annotations

import ast
from pathlib import Path

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


def test_every_call_of_the_entry_point_in_the_file_goes_through_the_op(repro: Path) -> None:
    """`k_q, k_s = quantix.fp8_quantize(k)` then `v_q, v_s = quantix.fp8_quantize(v)`: the log names line 16
    only, but line 17 reaches the same lock. Wrapping one call left the same crash for round 2 ("it did not
    help"); both calls now use the op."""
    rel = "heldout4/qx_fp8_tuple.py"
    apply(repro, "heldout4-fp8-tuple.log")
    text = (repro / rel).read_text()
    assert calls_of(text, "quantix.fp8_quantize") == []
    ops = calls_of(text, "_crashlens_qx_fp8_tuple_fp8_quantize.fp8_quantize")
    assert [ast.unparse(c.args[0]) for c in ops] == ["k", "v"]
    assert reverted(repro, rel) and not (repro / "heldout4" / "_crashlens_qx_fp8_tuple_fp8_quantize.py").exists()


def test_a_call_bound_otherwise_keeps_calling_the_library(repro: Path, tmp_path: Path) -> None:
    """A second call that passes what the shim does not bind the same way (here a keyword `out=` that
    `fp8_quantize` does not take) is not rewritten: it keeps calling the library as before."""
    rel = repro / "heldout4" / "qx_fp8_tuple.py"
    src = rel.read_text().replace("v_q, v_scale = quantix.fp8_quantize(v)",
                                  "v_q, v_scale = quantix.fp8_quantize(v, out=None)")
    rel.write_text(src)
    apply(repro, "heldout4-fp8-tuple.log")
    text = rel.read_text()
    assert [ast.unparse(c) for c in calls_of(text, "quantix.fp8_quantize")] == ["quantix.fp8_quantize(v, out=None)"]
    assert len(calls_of(text, "_crashlens_qx_fp8_tuple_fp8_quantize.fp8_quantize")) == 1


def test_an_entry_point_bound_with_functools_partial_becomes_the_op_where_it_is_bound(repro: Path) -> None:
    """`self.base = functools.partial(quantix.int8_gemm, b_q=..., b_scale=...)` in __init__, `self.base(x)` in
    forward: the line calls no `int8_gemm` by name, yet dynamo went from it straight into the library. The
    partial's callee becomes the op's wrapper; the arguments it binds (tensors) are passed to the op."""
    rel = "heldout4/qx_partial_gemm.py"
    apply(repro, "heldout4-partial-gemm.log")
    text = (repro / rel).read_text()
    (part,) = calls_of(text, "functools.partial")
    assert ast.unparse(part.args[0]) == "_crashlens_qx_partial_gemm_int8_gemm.int8_gemm"
    assert [k.arg for k in part.keywords] == ["b_q", "b_scale"]
    assert "self.base(x)" in text  # forward is unchanged
    shim = (repro / "heldout4" / "_crashlens_qx_partial_gemm_int8_gemm.py").read_text()
    assert "(Tensor a, Tensor b_q, Tensor b_scale, Tensor? out=None) -> Tensor" in shim
    assert reverted(repro, rel)


def test_a_call_of_an_attribute_that_is_not_a_partial_of_the_callee_is_no_op(repro: Path) -> None:
    """The same line, where `self.base` is assigned something else as well: which callable runs is not known
    from the file, so no op is made at that line (the planner falls through to the guard in the library)."""
    f = repro / "heldout4" / "qx_partial_gemm.py"
    src = f.read_text()
    f.write_text(src.replace("rank, vocab, bias=False)", "rank, vocab, bias=False); self.base = self.base", 1))
    p = cl("fix", str(LOGS / "heldout4-partial-gemm.log"), "--format", "json", cwd=repro)
    assert '"kind": "custom-op"' not in p.stdout and "functools.partial(_crashlens_" not in p.stdout


def test_a_library_module_s_forward_is_passed_over_for_the_function_it_calls(repro: Path) -> None:
    """`self.up(x)` calls quantix.QuantLinear.forward, which calls `int8_gemm(x, self.w_q, self.w_scale)`: the
    package's entry point is a method, which cannot be an op, so the plain function it calls becomes the op
    (a library patch, with a shim beside it), and every blocker below it goes at once."""
    lib = "heldout4/site-packages/quantix/ops.py"
    apply(repro, "heldout4-quant-mlp.log")
    text = (repro / lib).read_text()
    (op_call,) = calls_of(text, "_crashlens_ops_int8_gemm.int8_gemm")
    assert [ast.unparse(a) for a in op_call.args] == ["x", "self.w_q", "self.w_scale"]
    assert "from . import _crashlens_ops_int8_gemm" in text
    assert (repro / "heldout4" / "qx_quant_mlp.py").read_bytes() == (REPRO / "heldout4" / "qx_quant_mlp.py").read_bytes()
    assert reverted(repro, lib) and not (repro / "heldout4/site-packages/quantix/_crashlens_ops_int8_gemm.py").exists()


def test_a_crash_inside_code_compiled_from_a_string_is_fixed_at_the_line_that_called_it(repro: Path) -> None:
    """A dataclass's generated `__init__` (`File "<string>"`) calls time.monotonic_ns for a default_factory:
    no file holds that code, so every kind used to stop at "<string>: not found here". The line in forward that
    builds the dataclass is the statement the program can change (its result only stored on self)."""
    rel = "heldout4/arrival_monotonic.py"
    doc = cl("fix", str(LOGS / "heldout4-arrival-monotonic.log"), "--format", "json", cwd=repro)
    assert doc.returncode == 0 and "<string>" not in doc.stdout, doc.stdout + doc.stderr
    apply(repro, "heldout4-arrival-monotonic.log")
    fwd = next(n for n in ast.walk(ast.parse((repro / rel).read_text()))
               if isinstance(n, ast.FunctionDef) and n.name == "forward")
    guard = fwd.body[0]
    assert isinstance(guard, ast.If) and "is_compiling" in ast.unparse(guard.test)
    assert ast.unparse(guard.body[0]) == "self.last_meta = StepMeta(batch=x.shape[0])"
    assert ast.unparse(fwd.body[-1]).startswith("return torch.nn.functional.silu")
    assert reverted(repro, rel)


def test_a_crash_in_a_python_c_program_says_there_is_no_file_to_change(repro: Path) -> None:
    """Every user frame is `File "<string>"` (a `python -c` program): the answer is why nothing can be patched,
    not "<string>: not found here (give --root DIR ...)", which no --root could satisfy."""
    p = cl("fix", str(SAMPLES / "raw" / "cuda-dynamo-cuda-synchronize.log"), cwd=repro)
    assert p.returncode == 1 and "needs a person" in p.stderr and "compiled from a string" in p.stderr
    assert "not found here" not in p.stderr
