"""The second held-out recordings: programs in samples/repro/heldout_rec2, how each is run, and what a fix
must name there (data only; the vocabulary, the Repro record and heldout_batch are samples/corpus/plan.py's).

Written apart from the main corpus's reproducers and from the first held-out set (samples/repro/heldout_rec),
for a figure crashlens was not developed on: a torch.library custom op whose fake returns the wrong shape,
an unbacked length (repeat_interleave, .item()) used as a size without torch._check, saved_tensors_hooks in
forward, Tensor.numpy().tobytes() in forward, torch.cond branches that disagree on dtype, torch.distributed
get_rank() without a process group, an OrderedDict LRU (move_to_end), str.format of a SymInt, copy.deepcopy
of a submodule in forward, a functools.partial of struct.pack, a mark_dynamic dimension specialised by a
broadcast, and a third-party-like package (site-packages/tilekern) whose loader reads a JSON table through
pathlib, takes a threading.Lock, and runs subprocess under functools.lru_cache; and clean runs that print
dynamo-looking text. The remedy tokens were chosen per context before crashlens was run on any recording
(see README.md).
"""

from __future__ import annotations

import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "corpus"))

from plan import DISABLE, EAGER_TOO, GUARD, MOVE, OPAQUE, Repro, heldout_batch  # noqa: E402,F401

# per-call data: moving the computation out of the compiled region is right, "compute it once" is not
OUTSIDE = ("outside the compiled", "out of the compiled", "outside forward", "outside torch.compile",
           "outside of the compiled", "before calling the compiled", "after the compiled")
# a custom op's fake (meta) implementation that disagrees with its kernel: the fix is in the fake
FAKE = ("register_fake", "fake impl", "fake kernel", "fake function", "fake tensor impl", "meta impl",
        "meta function", "meta kernel", "impl_abstract", "abstract impl")
# an unbacked size: tell the compiler what the value is
CHECK = ("torch._check",)  # also matches torch._check_is_size
LIB = "heldout_rec2/site-packages/tilekern/"

_p, _both = heldout_batch("heldout_rec2")


REPROS: list[Repro] = [
    # user-code culprits
    _p("custom_op_fake_shape", marker="fake-consumer", remedies={"any": FAKE}, min_torch=(2, 4)),
    _p("repeat_view", marker="unbacked-view", remedies={"any": CHECK + ("output_size",)}),
    _p("item_size_zeros", marker="unbacked-size", remedies={"any": CHECK}),
    _p("saved_tensors_hooks", marker="saved-hooks", remedies={"any": GUARD + OUTSIDE}),
    *_both("tensor_numpy_bytes", "numpy-bytes", remedies={"any": GUARD + OUTSIDE}),
    _p("cond_dtype", marker="cond-dtype", min_torch=(2, 4),
       remedies={"any": ("same dtype", "same metadata", "matching dtype", "dtypes match", "same shape and dtype",
                         "same shapes and dtypes", "same output dtype", "identical dtype")}),
    _p("lru_move_to_end", marker="lru-move", remedies={"any": MOVE + ("register_buffer", "precompute")}),
    _p("format_symint", marker="format-symint", remedies={"any": GUARD + OUTSIDE}),
    _p("deepcopy_module", marker="deepcopy-module", remedies={"any": MOVE}),
    _p("partial_struct", marker="partial-pack", remedies={"any": GUARD + OUTSIDE}),
    _p("mark_dynamic_broadcast", marker="broadcast-specialise",
       remedies={"any": ("maybe_mark_dynamic", "remove the mark_dynamic", "drop the mark_dynamic",
                         "remove mark_dynamic", "without mark_dynamic", "don't mark", "do not mark")}),
    # fails in eager too (no process group): the code fix first, skipping the function cannot help
    _p("dist_rank", marker="dist-rank", disable_works=False,
       remedies={"any": EAGER_TOO + ("is_initialized", "init_process_group")}),
    # library culprits (tilekern under site-packages): fixes the user can make without editing the package
    _p("use_tile_matmul", marker="lib-pathlib-json", culprit_file=LIB + "loader.py", library=True,
       remedies={"any": OPAQUE}),
    *_both("use_tile_add", "lib-build-lock", LIB + "loader.py", library=True, remedies={"any": OPAQUE}),
    *_both("use_tile_act", "lib-subprocess", LIB + "loader.py", library=True, remedies={"any": OPAQUE}),
    # clean programs and runs that go on
    _p("clean_guards_log", env={"TORCH_LOGS": "guards,recompiles"}, kind="negative"),
    _p("clean_graph_code", env={"TORCH_LOGS": "graph_code"}, kind="negative"),
    _p("clean_eager_index", kind="negative"),
    _p("clean_user_unsupported", kind="negative"),
    _p("clean_suppressed_fake", fullgraph=False, kind="warnings", min_torch=(2, 4)),
]

BY_NAME = {r.name: r for r in REPROS}
assert len(BY_NAME) == len(REPROS), "duplicate repro names"
