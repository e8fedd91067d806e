"""What the corpus records: each reproducer, how it is run, and what a fix must name there (data only).

A `Repro` is one program under samples/repro.  `culprit` is (file relative to samples/repro, marker of
its `# expect:` comment); where it is None the culprit comes from samples/expected.toml for the same
log name.  `remedies` are lowercase tokens a fix title/detail must contain to be accepted, chosen per
context: `any` always, `user` / `library` by where the culprit is, `fullgraph` / `graph_break` by the
compile mode.  Fixes that fail in a context are simply absent there: `torch.compiler.disable` is accepted
only without fullgraph, and not where skipping the function cannot help (a failure that happens in eager
too, a backend bug); no reproducer whose failing call sits behind a traced cache accepts "precompute".
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field, replace
from typing import Any

# remedy vocabularies (lowercase substrings of a fix's title/detail/patch)
MOVE = ("__init__", "before compil", "outside the compiled", "outside forward", "out of the compiled")
OPAQUE = ("custom_op", "torch.library")
DISABLE = ("torch.compiler.disable", "torch._dynamo.disable")
GUARD = ("is_compiling",)
BACKEND = ("backend raised", "your backend", "the backend's", "backend=\"eager\"", "backend='eager'", "backend=eager")
EAGER_TOO = ("in eager", "without torch.compile", "eager too", "eager as well")
NO_CUDA = ("cuda build", "nvidia driver", "nvidia-smi", "cuda_visible_devices")


@dataclass(frozen=True)
class Repro:
    name: str                       # log name
    argv: tuple[str, ...]           # after the interpreter, cwd = samples/repro
    kind: str = "dynamo"            # dynamo | negative | warnings (a run that goes on, dynamo warnings fine)
    culprit: tuple[str, str] | None = None
    library: bool = False           # the culprit is in a library package (fakeinfer), not the user's file
    fullgraph: bool = True
    env: dict[str, str] = field(default_factory=dict)
    remedies: dict[str, tuple[str, ...]] = field(default_factory=dict)
    min_torch: tuple[int, int] = (2, 0)
    disable_works: bool = True      # False where skipping the function cannot help (fails in eager too, backend bug)

    def accepted(self) -> list[str]:
        ctx = {"any", "library" if self.library else "user", "fullgraph" if self.fullgraph else "graph_break"}
        toks: list[str] = []
        for key, words in self.remedies.items():
            if key in ctx:
                toks += [w for w in words if w not in toks]
        if not self.fullgraph and self.disable_works:
            toks += [w for w in DISABLE if w not in toks]
        return toks


def _scn(module: str, name: str | None = None, *, fullgraph: bool = True, env: dict[str, str] | None = None,
         **kw) -> Repro:
    name = name or module.replace("_", "-")
    argv = ("run_scenario.py", module) + (() if fullgraph else ("--no-fullgraph",))
    return Repro(name=name, argv=argv, fullgraph=fullgraph, env=env or {}, **kw)


def _lib(kind: str, extra: tuple[str, ...] = (), **kw) -> list[Repro]:
    rem = {"any": OPAQUE + extra}
    return [
        _scn(f"lib_{kind}", culprit=("fakeinfer/sampling.py", f"lib-{kind}"), library=True, remedies=rem, **kw),
        _scn(f"lib_{kind}", f"lib-{kind}-nofullgraph", fullgraph=False, env={"TORCH_LOGS": "graph_breaks"},
             kind="warnings", culprit=("fakeinfer/sampling.py", f"lib-{kind}"), library=True, remedies=rem, **kw),
    ]


GB = {"TORCH_LOGS": "graph_breaks"}


def heldout_batch(folder: str) -> tuple[Callable[..., Repro], Callable[..., list[Repro]]]:
    """How a held-out plan (samples/corpus-heldout*/plan.py) states the programs of its batch in
    samples/repro/`folder`: `one(module, ...)`, a run of `<folder>/run.py <module>` whose culprit is the line
    marked `marker` in `<folder>/<module>.py` (or in `culprit_file`); `both(module, marker, ...)`, that
    fullgraph=True crash and the fullgraph=False run that graph-breaks and goes on."""

    def one(module: str, name: str | None = None, *, fullgraph: bool = True, marker: str | None = None,
            culprit_file: str | None = None, **kw: Any) -> Repro:
        name = name or module.replace("_", "-")
        argv = (f"{folder}/run.py", module) + (() if fullgraph else ("--no-fullgraph",))
        culprit = (culprit_file or f"{folder}/{module}.py", marker) if marker else None
        return Repro(name=name, argv=argv, fullgraph=fullgraph, culprit=culprit, **kw)

    def both(module: str, marker: str, culprit_file: str | None = None, **kw: Any) -> list[Repro]:
        stem = module.replace("_", "-")
        return [one(module, marker=marker, culprit_file=culprit_file, **kw),
                one(module, f"{stem}-gb", fullgraph=False, env=GB, kind="warnings", marker=marker,
                    culprit_file=culprit_file, **kw)]

    return one, both


REPROS: list[Repro] = [
    # user-code culprits under fullgraph=True (culprit from samples/expected.toml)
    _scn("logging_call", remedies={"any": GUARD + ("ignore_logger_methods", "ignore_logging_functions",
                                                   "reorderable_logging_functions")}),
    _scn("print_call", remedies={"any": GUARD + ("reorderable_logging_functions",)}),
    _scn("warnings_warn", remedies={"any": GUARD}),
    _scn("builtin_open", remedies={"any": MOVE}),
    _scn("time_call", remedies={"any": MOVE + GUARD}),
    _scn("random_call", remedies={"any": ("torch.rand",)}),
    _scn("os_environ_write", remedies={"any": MOVE}),
    _scn("data_dependent_branch", remedies={"any": ("torch.cond", "torch.where")}),
    _scn("item_scalar", remedies={"any": ("capture_scalar_outputs",) + MOVE}),
    _scn("tolist", remedies={"any": ("capture_scalar_outputs",) + MOVE}),
    _scn("generator", remedies={"any": MOVE + ("list(", "a list", "itertools")}),
    _scn("observed_exception", remedies={"any": (".get(", "default") + MOVE}),
    _scn("module_setattr", remedies={"any": MOVE}),
    _scn("hook_registration", remedies={"any": MOVE}),
    _scn("context_manager_lock", remedies={"any": ("outside the compiled", "before compil", "take the lock")}),
    _scn("custom_op_define_noimpl", remedies={"any": ("register_fake", "impl_abstract", '"meta"', "'meta'", "meta kernel")}),
    _scn("custom_op_nofake", remedies={"any": ("register_fake",)}, min_torch=(2, 4)),
    _scn("compiler_disable", remedies={"fullgraph": OPAQUE}),
    _scn("namespace_construction", remedies={"any": MOVE + ("build it once", "module level")}),
    _scn("c_extension_call", remedies={"any": OPAQUE + ("allow_in_graph",)}),
    _scn("json_call", remedies={"any": MOVE + GUARD}),
    _scn("skipped_function", remedies={"any": MOVE + GUARD}),
    _scn("dynamo_generic", remedies={"any": ("module level", "outside the function", "define the class", "move the class")}),
    # recorded on machines without a GPU: get_device_capability raises "Found no NVIDIA driver" / "Torch not
    # compiled with CUDA enabled", which eager raises too (moving the query to __init__ fails the same way), so
    # the accepted fix is the environment's (issue 13 section 4), not a tracing one
    _scn("torch_cuda_query", disable_works=False, remedies={"any": EAGER_TOO + NO_CUDA}),
    _scn("backend_failed", disable_works=False, remedies={"any": BACKEND}),
    _scn("backend_failed", "backend-failed-nofullgraph", disable_works=False, fullgraph=False, remedies={"any": BACKEND}),
    # families that had no reproducer
    _scn("parameter_in_forward", culprit=("scenarios/parameter_in_forward.py", "parameter"), remedies={"any": MOVE}),
    _scn("bincount_dynamic", culprit=("scenarios/bincount_dynamic.py", "bincount"),
         remedies={"any": ("capture_dynamic_output_shape_ops",)}),
    _scn("nonzero_dynamic", culprit=("scenarios/nonzero_dynamic.py", "nonzero"),
         remedies={"any": ("capture_dynamic_output_shape_ops",)}),
    _scn("fake_device_mismatch", disable_works=False, culprit=("scenarios/fake_device_mismatch.py", "device-mismatch"),
         remedies={"any": EAGER_TOO + ("same device", ".to(")}),
    _scn("fake_device_mismatch", "fake-device-mismatch-nofullgraph", disable_works=False, fullgraph=False,
         culprit=("scenarios/fake_device_mismatch.py", "device-mismatch"),
         remedies={"any": EAGER_TOO + ("same device", ".to(")}),
    _scn("fake_shape_mismatch", disable_works=False, culprit=("scenarios/fake_shape_mismatch.py", "shape-mismatch"),
         remedies={"any": EAGER_TOO + ("transpose", "shapes")}),
    _scn("fake_shape_mismatch", "fake-shape-mismatch-nofullgraph", disable_works=False, fullgraph=False,
         culprit=("scenarios/fake_shape_mismatch.py", "shape-mismatch"),
         remedies={"any": EAGER_TOO + ("transpose", "shapes")}),
    _scn("setattr_user_object", culprit=("scenarios/setattr_user_object.py", "setattr"), remedies={"any": MOVE}),
    _scn("optimizer_setattr", culprit=("scenarios/optimizer_setattr.py", "optimizer-setattr"), remedies={"any": MOVE}),
    _scn("next_no_default", disable_works=False, culprit=("scenarios/next_no_default.py", "next"),
         remedies={"any": EAGER_TOO + ("default",)}),
    _scn("zip_strict", disable_works=False, culprit=("scenarios/zip_strict.py", "zip-strict"),
         remedies={"any": EAGER_TOO + ("lengths", "strict")}, min_torch=(2, 0)),
    # a graph break whose 2.7+ Hint says the code fails in eager too (graph_break_hints.USER_ERROR); 2.1-2.6
    # word it as a one-liner
    _scn("undefined_local", disable_works=False, culprit=("scenarios/undefined_local.py", "undefined-local"),
         remedies={"any": EAGER_TOO}),
    # a torch._dynamo.graph_break() left in code compiled with fullgraph=True (graph-break-call; 2.7+ GB0025)
    _scn("explicit_graph_break", culprit=("scenarios/explicit_graph_break.py", "graph-break-call"),
         remedies={"any": ("remove the `torch._dynamo.graph_break()`", "remove the torch._dynamo.graph_break()")}),
    # a builtin dynamo cannot call on a tensor (2.7+ "Failed to trace builtin operator", GB0059, with `str`): not
    # `open`, whose signature the nearest wording is
    _scn("builtin_on_tensor", culprit=("scenarios/builtin_on_tensor.py", "str-tensor"),
         remedies={"any": MOVE + ("avoid calling builtin `str`",)}),
    _scn("os_environ_read", culprit=("scenarios/os_environ_read.py", "environ-read"), remedies={"any": MOVE}),
    # library culprits (fakeinfer/sampling.py), with and without fullgraph
    *_lib("logging", ("ignore_logger_methods", "ignore_logging_functions")),
    *_lib("environ"),
    *_lib("time"),
    *_lib("item", ("capture_scalar_outputs",)),
    *_lib("nonzero", ("capture_dynamic_output_shape_ops",)),
    *_lib("parameter", ("__init__", "before compil", "warm")),
    # library culprits that fail with and without fullgraph (a device bug that eager hits too; a raising backend)
    *[_scn("lib_device", f"lib-device{sfx}", fullgraph=fg, culprit=("fakeinfer/sampling.py", "lib-device"),
           library=True, disable_works=False, remedies={"any": EAGER_TOO + ("same device", ".to(")}) for fg, sfx in ((True, ""), (False, "-nofullgraph"))],
    *[_scn("lib_backend", f"lib-backend{sfx}", fullgraph=fg, culprit=("fakeserve/compilation/backend.py", "lib-backend"),
           library=True, disable_works=False, remedies={"any": BACKEND}) for fg, sfx in ((True, ""), (False, "-nofullgraph"))],
    # non-fatal graph breaks of runs that go on (fullgraph=False, TORCH_LOGS=graph_breaks)
    *[_scn(m, f"{m.replace('_', '-')}-gb", fullgraph=False, env=GB, kind="warnings")
      for m in ("logging_call", "print_call", "warnings_warn", "builtin_open", "time_call", "data_dependent_branch",
                "item_scalar", "tolist", "compiler_disable", "c_extension_call", "parameter_in_forward",
                "bincount_dynamic", "os_environ_read", "next_no_default")],
    # recompiles
    Repro("recompile-limit", ("run_scenario.py", "recompile_limit"), env={"TORCH_LOGS": "recompiles"},
          remedies={"any": ("mark_dynamic", "dynamic=true", "recompile_limit", "cache_size_limit", "as a tensor", "torch.tensor(")}),
    Repro("recompile-limit-nofullgraph", ("run_scenario.py", "recompile_limit", "--no-fullgraph"), kind="warnings",
          fullgraph=False, env={"TORCH_LOGS": "recompiles"}),
    # negatives
    _scn("healthy_compile", kind="negative"),
    _scn("healthy_compile", "healthy-compile-nofullgraph", fullgraph=False, env=GB, kind="negative"),
    _scn("runtime_error_in_compiled", kind="negative"),
    _scn("eager_torch_cuda", kind="negative"),
    _scn("eager_value_error", kind="negative"),
    # the fakeinfer FP4 chain: library culprits, one blocker per round (culprits from expected.toml)
    *[Repro(f"fp4-round-{n}", ("fp4_rounds.py", "--round", str(n)), library=True,
            kind="negative" if n == 10 else "dynamo",
            remedies={"any": OPAQUE}) for n in range(1, 11)],
    Repro("fp4-graph-breaks", ("fp4_rounds.py", "--graph-breaks"), env=GB, fullgraph=False, kind="warnings"),
    # the SGLang-shaped start-ups (fakeserve); frame.py-style framing is applied at build time
    Repro("fakeserve-pcg-fp4", ("-m", "fakeserve.launch_server"), library=True, remedies={"any": OPAQUE}),
    Repro("fakeserve-pcg-bf16", ("-m", "fakeserve.launch_server", "--quantization", "none"), kind="negative"),
    Repro("fakeserve-torch-compile-fp4", ("-m", "fakeserve.launch_server", "--enable-torch-compile",
                                          "--torch-compile-max-bs", "2"), env=GB, fullgraph=False, kind="warnings"),
    Repro("fakeserve-import-error", ("-m", "fakeserve.launch_server", "--quantization", "mxfp4"), kind="negative"),
]

def _with_base(r: Repro) -> Repro:
    """A fullgraph=False variant of a scenario takes its culprit and remedies from the fullgraph=True run."""
    base = next((b for b in REPROS if b.argv == r.argv[:2] and b.fullgraph and b is not r), None)
    if r.fullgraph or base is None or r.argv[0] != "run_scenario.py":
        return r
    return replace(r, culprit=r.culprit or base.culprit, remedies=r.remedies or base.remedies,
                   library=base.library, disable_works=base.disable_works and r.disable_works)


REPROS = [_with_base(r) for r in REPROS]
BY_NAME = {r.name: r for r in REPROS}
assert len(BY_NAME) == len(REPROS), "duplicate repro names"


def load_plan(path: str | None) -> list[Repro]:
    """The REPROS of another plan file (same Repro record; e.g. samples/corpus-heldout/plan.py), else this corpus's."""
    if not path:
        return REPROS
    # loaded under a name of its own: it imports this module as `plan` for the Repro record
    import importlib.util
    from pathlib import Path

    spec = importlib.util.spec_from_file_location("corpus_plan_" + Path(path).parent.name.replace("-", "_"), path)
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod.REPROS
