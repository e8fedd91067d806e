"""The held-out recordings: programs in samples/repro/heldout_rec, how each is run, and what a fix must name
there (data only; the vocabulary, the Repro record and heldout_batch are samples/corpus/plan.py's).

Written apart from the main corpus's reproducers, for a figure crashlens was not developed on: other
failure families and variants (a tensor formatted into a string, sys._getframe, weakref, id() keys,
manual_seed, a generator-based context manager, dict growth during iteration, an in-place update of a leaf,
a dynamic dimension specialised by a branch, a branch on a captured scalar, .item() in an
autograd.Function, zlib.crc32, a ValueError raised in forward, data_ptr / hashlib / threading.get_ident /
inspect.signature inside a third-party-like package), and clean runs that print dynamo-looking text.
The remedy tokens were chosen per context before crashlens was run on any recording (see README.md).
"""

from __future__ import annotations

import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "corpus"))

from plan import DISABLE, EAGER_TOO, GUARD, MOVE, OPAQUE, Repro, heldout_batch  # noqa: E402,F401

# per-call data: moving the computation out of the compiled region is right, "compute it once" is not
OUTSIDE = ("outside the compiled", "out of the compiled", "outside forward")

_p, _both = heldout_batch("heldout_rec")


KV = "heldout_rec/site-packages/kvpack/"

REPROS: list[Repro] = [
    # user-code culprits
    *_both("fstring_debug", "fstring", remedies={"any": GUARD + OUTSIDE}),
    _p("caller_name", marker="getframe", remedies={"any": GUARD + OUTSIDE + ("as an argument",)}),
    _p("weakref_last", marker="weakref", remedies={"any": GUARD + OUTSIDE}),
    _p("id_keyed_cache", marker="id-key", remedies={"any": MOVE}),
    *_both("seed_in_forward", "manual-seed", remedies={"any": MOVE + ("torch.generator", "generator=")}),
    *_both("timer_context", "perf-counter", remedies={"any": GUARD + OUTSIDE + ("torch.profiler", "record_function")}),
    *_both("crc_tag", "crc32", remedies={"any": MOVE}),
    _p("dynamic_batch_branch", marker="specialise", remedies={"any": ("maybe_mark_dynamic", "mark_dynamic")}),
    _p("unbacked_branch", marker="unbacked-guard", remedies={"any": ("torch._check", "torch.cond", "torch.where")}),
    _p("function_item", marker="function-item",
       remedies={"any": ("as a tensor", "a tensor instead", "keep it a tensor", "0-d tensor")}),
    # user code that fails in eager too: the code fix first, skipping the function cannot help
    _p("dict_grow_loop", marker="dict-iter", disable_works=False,
       remedies={"any": EAGER_TOO + ("list(", "copy", "changed size")}),
    *[_p("inplace_leaf", "inplace-leaf" + sfx, fullgraph=fg, marker="inplace-leaf", disable_works=False,
         remedies={"any": EAGER_TOO + ("no_grad", "out-of-place", "clone", "requires_grad")})
      for fg, sfx in ((True, ""), (False, "-nofullgraph"))],
    _p("validate_raise", marker="raise-value", disable_works=False, remedies={"any": EAGER_TOO + ("valueerror",)}),
    # library culprits (kvpack under site-packages): fixes the user can make without editing the package
    *_both("use_kv_scales", "lib-data-ptr", KV + "scales.py", library=True, remedies={"any": OPAQUE}),
    *_both("use_kv_workspace", "lib-hashlib", KV + "workspace.py", library=True, remedies={"any": OPAQUE}),
    *_both("use_kv_stats", "lib-thread-ident", KV + "stats.py", library=True, remedies={"any": OPAQUE + GUARD}),
    *_both("use_kv_dispatch", "lib-inspect", KV + "dispatch.py", library=True, remedies={"any": OPAQUE}),
    # clean programs and runs that go on
    _p("clean_verbose_dynamo", env={"TORCH_LOGS": "dynamo"}, kind="negative"),
    _p("clean_eager_shape", kind="negative"),
    _p("clean_deprecations", kind="negative"),
    _p("clean_suppressed_backend", fullgraph=False, kind="warnings"),
    _p("clean_attr_recompiles", fullgraph=False, env={"TORCH_LOGS": "recompiles"}, kind="warnings"),
]

BY_NAME = {r.name: r for r in REPROS}
assert len(BY_NAME) == len(REPROS), "duplicate repro names"
