"""The third held-out recordings: programs in samples/repro/heldout_rec3, how each is run, and what a fix
must name there (data only; the vocabulary, the Repro record and heldout_batch are samples/corpus/plan.py's).

Written apart from the main corpus's reproducers and from the first two held-out sets (samples/repro/heldout_rec,
samples/repro/heldout_rec2), for a figure crashlens was not developed on: torch.autograd.grad in forward,
bisect on a shape, decimal.Decimal rounding of a config scale, an Enum built by value, a regex on a config
string, itertools.groupby over layer kinds, a torch._dynamo.graph_break() left under fullgraph=True, a
torch.Generator created in forward, torch.random.fork_rng() in forward, Python iteration over a dimension
marked dynamic, a .view of a non-contiguous tensor (fails in eager too), contextlib.redirect_stdout in
forward, sorted(key=tensor norm), a __torch_function__ subclass counting ops into a collections.Counter,
torch.save into an io.BytesIO; and a third-party-like package (site-packages/normkit) whose config module
parses a spec string with a regex, imports its kernels lazily with importlib, and checks os.getpid() for a
fork; and clean runs that print dynamo-looking text, and eager errors after a clean compile. The remedy
tokens were chosen per context before crashlens was run on any recording (see README.md).
"""

from __future__ import annotations

import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "corpus"))

from plan import DISABLE, EAGER_TOO, GUARD, MOVE, OPAQUE, Repro, heldout_batch  # noqa: E402,F401

# per-call work: moving it out of the compiled region is right, "compute it once" is not
OUTSIDE = ("outside the compiled", "out of the compiled", "outside forward", "outside torch.compile",
           "outside of the compiled", "before calling the compiled", "after the compiled")
# a value constant per module (parsed from a config string): compute it once, before compile
ONCE = MOVE + ("precompute",)
# a dimension marked dynamic that the program specialises
NO_MARK = ("maybe_mark_dynamic", "remove the mark_dynamic", "drop the mark_dynamic", "remove mark_dynamic",
           "without mark_dynamic", "don't mark", "do not mark")
LIB = "heldout_rec3/site-packages/normkit/"

_p, _both = heldout_batch("heldout_rec3")


REPROS: list[Repro] = [
    # user-code culprits
    _p("autograd_grad_forward", marker="autograd-grad", remedies={"any": OUTSIDE + ("torch.func",)}),
    _p("bisect_bucket", marker="bisect-bucket", remedies={"any": OUTSIDE + ("bucketize", "searchsorted")}),
    _p("decimal_scale", marker="decimal-scale", remedies={"any": ONCE}),
    _p("enum_from_value", marker="enum-by-value", remedies={"any": ONCE}),
    _p("regex_config", marker="regex-spec", remedies={"any": ONCE}),
    _p("groupby_layers", marker="groupby-kinds", remedies={"any": ONCE}),
    *_both("explicit_graph_break", "explicit-break",
           remedies={"any": ("graph_break()", "torch._dynamo.graph_break", "explicit graph break")}),
    _p("generator_in_forward", marker="generator-new",
       remedies={"any": OUTSIDE + ("drop the generator", "remove the generator", "without the generator",
                                   "without a generator")}),
    _p("fork_rng", marker="fork-rng", remedies={"any": OUTSIDE + ("as an input", "pass the noise")}),
    _p("iter_dynamic_rows", marker="iter-dynamic",
       remedies={"any": NO_MARK + ("vectoris", "vectoriz", "instead of iterating", "instead of a python loop",
                                   "without the loop")}),
    # fails in eager too (a view of a non-contiguous tensor): the code fix first, skipping the function cannot help
    _p("noncontig_view", marker="noncontig-view", disable_works=False,
       remedies={"any": EAGER_TOO + ("reshape", "contiguous()")}),
    *_both("redirect_stdout", "redirect-stdout", remedies={"any": GUARD + OUTSIDE}),
    *_both("sorted_by_norm", "sorted-norm", remedies={"any": ("torch.sort", "argsort", "torch.topk")}),
    # 2.4/2.7 stop at the Counter update in __torch_function__; 2.1 cannot take the subclass as an input at all
    # (it stops at the first op on it, marked subclass-op, which build.py takes as the last marked frame): hand
    # the compiled function a plain tensor, or count the ops outside the compiled region
    _p("torch_function_subclass", marker="subclass-counter",
       remedies={"any": OUTSIDE + ("as_subclass(torch.tensor)", "plain tensor", "plain torch.tensor")}),
    *_both("torch_save_bytes", "snapshot-buffer", remedies={"any": GUARD + OUTSIDE}),
    # library culprits (normkit under site-packages): fixes the user can make without editing the package
    _p("use_norm_rms", marker="lib-regex-spec", culprit_file=LIB + "config.py", library=True,
       remedies={"any": OPAQUE}),
    *_both("use_norm_gelu", "lib-lazy-import", LIB + "config.py", library=True, remedies={"any": OPAQUE}),
    *_both("use_norm_layer", "lib-fork-check", LIB + "config.py", library=True, remedies={"any": OPAQUE}),
    # clean programs, and eager errors after a clean compile
    _p("clean_aot_graphs", env={"TORCH_LOGS": "aot_graphs"}, kind="negative"),
    _p("clean_ckpt_nonreentrant", env={"TORCH_LOGS": "graph_breaks,recompiles"}, kind="negative"),
    _p("clean_eager_json", kind="negative"),
    _p("clean_eager_view", kind="negative"),
]

BY_NAME = {r.name: r for r in REPROS}
assert len(BY_NAME) == len(REPROS), "duplicate repro names"
