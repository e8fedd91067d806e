"""The fourth held-out recordings: programs in samples/repro/heldout_rec4, how each is run, and what a fix
must name there (data only; the vocabulary, the Repro record and heldout_batch are samples/corpus/plan.py's).

Written apart from the main corpus's reproducers and from the first three held-out sets (samples/repro/heldout_rec,
heldout_rec2, heldout_rec3), for a figure crashlens was not developed on: array.array("q") of a shape,
ctypes.c_float rounding of a config scale, queue.Queue.put_nowait of a telemetry tensor, threading.Event.is_set
in a decode loop, a coroutine-style generator's .send, dataclasses.replace of a frozen config,
traceback.extract_stack in forward, contextvars.ContextVar.get of a per-request setting, uuid.uuid4() trace ids,
gc.collect() in a training step, math.isfinite on a loss tensor, fnmatch of a layer name, untyped_storage().nbytes()
accounting, torch.get_num_threads() chunking, torch.autograd.detect_anomaly() in forward; and a third-party-like
package (site-packages/fastrope) whose config splits a flags string with shlex, probes the torch version with
importlib.metadata, sizes work by os.cpu_count(), and looks for an optional backend with importlib.util.find_spec;
and clean runs that print dynamo logs (TORCH_LOGS=+dynamic, TORCH_LOGS=bytecode,graph), and eager errors after a
clean compile. The remedy tokens were chosen per context before crashlens was run on any recording (see README.md).
"""

from __future__ import annotations

import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "corpus"))

from plan import DISABLE, EAGER_TOO, GUARD, MOVE, OPAQUE, Repro, heldout_batch  # noqa: E402,F401

# per-call work: moving it out of the compiled region is right, "compute it once" is not
OUTSIDE = ("outside the compiled", "out of the compiled", "outside forward", "outside torch.compile",
           "outside of the compiled", "before calling the compiled", "after the compiled")
# a value constant per process (a config scale, a frozen config, a layer name, the thread count): compute it once,
# before compile
ONCE = MOVE + ("precompute", "module level")
LIB = "heldout_rec4/site-packages/fastrope/"

_p, _both = heldout_batch("heldout_rec4")


REPROS: list[Repro] = [
    # user-code culprits
    # per-call work: the header of this response, the telemetry of this call, this call's trace id
    _p("array_header", marker="array-shape", remedies={"any": OUTSIDE}),
    _p("ctypes_scale", marker="ctypes-float", remedies={"any": ONCE}),
    # skipping the telemetry under compile keeps the model's result; so does returning the norm as an output
    *_both("queue_telemetry", "queue-put", remedies={"any": OUTSIDE + GUARD + ("as an output",)}),
    # the shutdown check belongs in the Python loop around the compiled step
    _p("stop_event", marker="event-is-set", remedies={"any": OUTSIDE}),
    # the running mean as module state (a buffer), or updated outside the compiled region
    *_both("generator_send", "gen-send", remedies={"any": OUTSIDE + ("register_buffer",)}),
    _p("dataclass_replace", marker="dc-replace", remedies={"any": ONCE}),
    *_both("traceback_stack", "extract-stack", remedies={"any": OUTSIDE + GUARD}),
    # a per-request value: read it outside and hand it to the compiled function as an input, not "compute it once"
    _p("contextvar_request", marker="contextvar-get",
       remedies={"any": OUTSIDE + ("as an input", "as an argument", "pass the temperature", "pass it in")}),
    *_both("uuid_trace_id", "uuid4", remedies={"any": OUTSIDE}),
    _p("gc_collect_step", marker="gc-collect", remedies={"any": OUTSIDE + GUARD}),
    # a data-dependent Python check on a tensor: the tensor op instead
    _p("math_isfinite", marker="math-isfinite", remedies={"any": ("torch.isfinite", "torch.where", "torch.cond")}),
    _p("fnmatch_layers", marker="fnmatch-name", remedies={"any": ONCE}),
    _p("storage_nbytes", marker="storage-nbytes", remedies={"any": OUTSIDE + GUARD}),
    _p("num_threads_chunks", marker="num-threads", remedies={"any": ONCE}),
    _p("detect_anomaly", marker="detect-anomaly",
       remedies={"any": OUTSIDE + ("set_detect_anomaly", "remove the detect_anomaly", "remove detect_anomaly",
                                   "drop the detect_anomaly", "without detect_anomaly")}),
    # library culprits (fastrope under site-packages): fixes the user can make without editing the package
    *_both("use_rope_flag", "lib-shlex-flags", LIB + "config.py", library=True, remedies={"any": OPAQUE}),
    _p("use_rope_kernels", marker="lib-find-spec", culprit_file=LIB + "__init__.py", library=True,
       remedies={"any": OPAQUE}),
    _p("use_rope_versioned", marker="lib-version-probe", culprit_file=LIB + "config.py", library=True,
       remedies={"any": OPAQUE}),
    *_both("use_rope_chunks", "lib-cpu-count", LIB + "config.py", library=True, remedies={"any": OPAQUE}),
    # clean programs, and eager errors after a clean compile
    _p("clean_dynamic_logs", env={"TORCH_LOGS": "+dynamic"}, kind="negative"),
    _p("clean_bytecode_logs", env={"TORCH_LOGS": "bytecode,graph"}, kind="negative"),
    _p("clean_eager_struct", kind="negative"),
    _p("clean_eager_assert", kind="negative"),
]

BY_NAME = {r.name: r for r in REPROS}
assert len(BY_NAME) == len(REPROS), "duplicate repro names"
