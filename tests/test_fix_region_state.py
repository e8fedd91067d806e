"""`crashlens fix` on lines of forward that compute in Python what the rest uses, when those lines use the
object's own state (a heapq free list, a dict cache, a random.Random, a set, a submodule) or reach the
return: one opaque op over the lines, reaching the object through a handle it registers in `__init__`.
From recorded logs (samples/fix/heldout4-*.log, torch 2.13.0+cpu) and a copy of samples/repro, without torch."""

from __future__ import annotations

import ast
import json
from pathlib import Path

from conftest import SAMPLES, cl, plan

LOGS = SAMPLES / "fix"
REPRO = SAMPLES / "repro"


def fn(src: str, name: str) -> ast.FunctionDef:
    return next(n for n in ast.walk(ast.parse(src)) if isinstance(n, ast.FunctionDef) and n.name == name)


def region_fn(src: str) -> ast.FunctionDef:
    return next(n for n in ast.parse(src).body if isinstance(n, ast.FunctionDef) and "_lines_" in n.name)


def apply(repro: Path, log: str) -> None:
    p = cl("fix", str(LOGS / log), "--apply", cwd=repro)
    assert p.returncode == 0, p.stdout + p.stderr


def reverted(repro: Path, *rels: str) -> bool:
    assert cl("fix", "--revert", cwd=repro).returncode == 0
    left = [p.name for p in (repro / "heldout4").glob("_crashlens_*.py")]
    return not left and all((repro / r).read_bytes() == (REPRO / r).read_bytes() for r in rels)


def reason(repro: Path, log: str) -> str:
    p = cl("fix", str(LOGS / log), "--format", "json", cwd=repro)
    assert p.returncode == 1, p.stdout + p.stderr
    doc = json.loads(p.stdout)
    assert doc["status"] == "needs-a-person"
    return str(doc["reason"])


def test_a_heapq_free_list_on_the_object_is_popped_inside_the_op_and_the_object_registers_in_init(repro: Path) -> None:
    """`slots = [heapq.heappop(self.free) ...]`, `cache = self.cache.index_copy(0, torch.tensor(slots), k)`: the
    list of slots is no tensor, the cache is. The two lines run as one op; the op pops from the object's own
    list at run time (as eager does) through the handle `__init__` registers; the buffer goes in as a tensor."""
    doc = plan(repro, "heldout4-heapq-slot-alloc.log")
    assert doc["kind"] == "custom-op"
    assert any("(int obj, Tensor x, Tensor k, Tensor self_cache) -> Tensor" in n for n in doc["notes"])
    apply(repro, "heldout4-heapq-slot-alloc.log")
    text = (repro / "heldout4" / "heapq_slot_alloc.py").read_text()
    op = region_fn(text)
    assert [a.arg for a in op.args.args][0] == "self"
    assert "heapq.heappop(self.free)" in ast.unparse(op) and "self_cache.index_copy" in ast.unparse(op)
    fwd = ast.unparse(fn(text, "forward"))
    assert "heappop" not in fwd and f"{op.name}(self, x, k, self.cache)" in fwd
    init = fn(text, "__init__")
    assert ast.unparse(init.body[-1]).endswith(".keep(self)")
    shim = next((repro / "heldout4").glob("_crashlens_heapq_slot_alloc_*.py")).read_text()
    # the fake runs on a copy of the object: tracing pops nothing from the real free list
    assert "_isolated(obj)" in shim and "deepcopy(live, memo)" in shim
    assert "return _op(id(self), x, k, self_cache)" in shim
    assert reverted(repro, "heldout4/heapq_slot_alloc.py")


def test_a_plain_number_the_object_keeps_goes_into_the_op_and_a_submodule_result_is_a_tensor(repro: Path) -> None:
    """`logits = self.head(h)` (a torch.nn.Linear __init__ built: a tensor), then numpy's argpartition on it with
    `self.k` (an int): the op takes `logits` and `k`, and no handle is needed."""
    doc = plan(repro, "heldout4-numpy-argpartition.log")
    assert any("(Tensor logits, SymInt k) -> Tensor" in n for n in doc["notes"])
    apply(repro, "heldout4-numpy-argpartition.log")
    text = (repro / "heldout4" / "numpy_argpartition.py").read_text()
    assert "keep(self)" not in text
    fwd = ast.unparse(fn(text, "forward"))
    assert "logits = self.head(h)" in fwd and "np.argpartition" not in fwd and "return torch.softmax(top" in fwd
    assert reverted(repro, "heldout4/numpy_argpartition.py")


def test_a_random_generator_the_object_owns_is_drawn_from_in_the_op_with_the_gate_that_uses_the_draw(
        repro: Path) -> None:
    """`noise = 1.0 + self.rng.uniform(...)` is a float, so the op reaches to `w = softmax(self.gate(x * noise))`,
    the first tensor the rest reads; the rest (`sum(... e(x) for e in self.experts)`) stays traced."""
    apply(repro, "heldout4-router-jitter-rng.log")
    text = (repro / "heldout4" / "router_jitter_rng.py").read_text()
    op = ast.unparse(region_fn(text))
    assert "self.rng.uniform" in op and "self.gate(x * noise)" in op
    fwd = ast.unparse(fn(text, "forward"))
    assert "self.rng" not in fwd and "self.experts" in fwd
    assert reverted(repro, "heldout4/router_jitter_rng.py")


def test_lines_that_reach_the_return_become_the_return(repro: Path) -> None:
    """`scaled = copy.deepcopy(self.adapter)` is a module, used only by the return statement: the op is the
    copy, the in-place scaling of the copy, and what forward returns."""
    apply(repro, "heldout4-deepcopy-adapter.log")
    text = (repro / "heldout4" / "deepcopy_adapter.py").read_text()
    f = fn(text, "forward")
    assert len(f.body) == 1 and isinstance(f.body[0], ast.Return)
    op = region_fn(text)
    assert isinstance(op.body[-1], ast.Return) and "scaled(x)" in ast.unparse(op.body[-1])
    assert reverted(repro, "heldout4/deepcopy_adapter.py")


def test_state_changed_by_the_statement_before_comes_into_the_op(repro: Path) -> None:
    """`self.history.append(y)` then `if sys.getsizeof(self.history) > budget: del self.history[...]`: left
    outside, dynamo would append after the op had already measured the list; the append comes in."""
    doc = plan(repro, "heldout4-history-getsizeof.log")
    assert "18-21" in doc["title"]
    apply(repro, "heldout4-history-getsizeof.log")
    text = (repro / "heldout4" / "history_getsizeof.py").read_text()
    op = ast.unparse(region_fn(text))
    assert "self.history.append" in op and "del self.history" in op
    assert "self.history" not in ast.unparse(fn(text, "forward"))
    assert reverted(repro, "heldout4/history_getsizeof.py")


def test_state_the_lines_change_that_forward_also_reads_elsewhere_needs_a_person(repro: Path) -> None:
    """The same free list, read again after the lines (`len(self.free)`): dynamo would read it as it was before
    the op popped from it."""
    f = repro / "heldout4" / "heapq_slot_alloc.py"
    src = f.read_text()
    f.write_text(src.replace("        return cache\n", "        return cache * len(self.free)\n"))
    r = reason(repro, "heldout4-heapq-slot-alloc.log")
    assert "self.free" in r and "outside them" in r


def test_a_tensor_the_object_keeps_changed_in_place_needs_a_person(repro: Path) -> None:
    """`self.cache.index_copy_(...)`: the op would change a buffer dynamo does not know it changes."""
    f = repro / "heldout4" / "heapq_slot_alloc.py"
    src = f.read_text()
    f.write_text(src.replace("cache = self.cache.index_copy(0, torch.tensor(slots), k)",
                             "cache = self.cache.index_copy_(0, torch.tensor(slots), k)"))
    r = reason(repro, "heldout4-heapq-slot-alloc.log")
    assert "self.cache.index_copy_" in r and "in place" in r


def test_a_dict_cache_on_the_object_is_filled_inside_the_op(repro: Path) -> None:
    """`key = hashlib.blake2b(x...).hexdigest()`, `out = self.seen.get(key)`, fill on a miss: the op returns
    `out` and fills the object's own dict at run time."""
    apply(repro, "heldout4-embed-dedup-hash.log")
    text = (repro / "heldout4" / "embed_dedup_hash.py").read_text()
    op = ast.unparse(region_fn(text))
    assert "self.seen[key] = out.detach()" in op and "hashlib.blake2b" in op
    assert ast.unparse(fn(text, "forward").body[-1]) == "return out"
    assert reverted(repro, "heldout4/embed_dedup_hash.py")


def test_a_set_of_stop_ids_on_the_object_is_read_through_the_handle(repro: Path) -> None:
    """`done = torch.tensor([t in self.stop_ids for t in next_ids.tolist()])`: a set is not an op argument."""
    doc = plan(repro, "heldout4-stop-tokens-tolist.log")
    assert any("(int obj, Tensor next_ids) -> Tensor" in n for n in doc["notes"])


def test_a_module_level_generator_the_lines_advance_is_not_made_an_op(repro: Path) -> None:
    """`adapter = next(ADAPTER_IDS)`: the derived fake, run while tracing, would advance the module's generator
    (eager draws once a call): needs a person."""
    p = cl("fix", str(SAMPLES / "raw" / "generator.log"), "--format", "json", cwd=repro)
    assert p.returncode == 1
    assert "ADAPTER_IDS" in json.loads(p.stdout)["reason"]
