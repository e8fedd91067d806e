"""Round-by-round patching of the fakeinfer FP4 path under torch.compile(fullgraph=True).

This replays what a team does when a piecewise-CUDA-graph start-up dies inside FlashInfer:
patch the function named in the traceback, restart, read the next traceback, repeat.

    python fp4_rounds.py --round N        # apply patches 1..N-1, then compile with fullgraph=True
    python fp4_rounds.py --graph-breaks   # no patches, fullgraph=False (set TORCH_LOGS=graph_breaks)

Every patch moves the offending call out of the traced region (precompute / preload at start-up,
which is what the eager warm-up below already did), the only fix that works under fullgraph.
"""

import argparse
import sys

import torch

import fakeinfer
from fakeinfer.jit import core, cpp_ext
from fakeinfer.quantization import fp4_quantization

PATCHES = []
PRELOADED = {}  # JIT modules loaded at start-up, by spec name


def patch(fn):
    PATCHES.append(fn)
    return fn


@patch
def p1_constant_cuda_version():
    """get_cuda_version shells out; pin the version found at start-up."""
    version = cpp_ext.get_cuda_version()
    cpp_ext.get_cuda_version = lambda: version


@patch
def p2_registry_without_timestamp():
    """JitSpecRegistry.register stamps datetime.now(); record the spec without it."""

    def register(self, spec):
        self._specs[spec.name] = spec

    core.JitSpecRegistry.register = register


@patch
def p3_is_aot_precomputed():
    """JitSpec.is_aot stats the AOT path; answer from a table filled at start-up."""
    aot = {spec.name: spec.aot_path.exists() for spec in core.jit_spec_registry}
    core.JitSpec.is_aot = property(lambda self: aot.get(self.name, False))


@patch
def p4_tmpdir_precomputed():
    """get_tmpdir stats (and creates) the lock directory; create it once at start-up."""
    tmpdir = core.get_tmpdir()
    core.get_tmpdir = lambda: tmpdir


@patch
def p5_no_filelock():
    """FileLock() allocates a thread lock; the library is built already, so skip the lock."""
    core.FileLock = core._NullLock


@patch
def p6_is_compiled_precomputed():
    """JitSpec.is_compiled stats the .so; answer from a table filled at start-up."""
    built = {spec.name: spec.jit_library_path.exists() for spec in core.jit_spec_registry}
    core.JitSpec.is_compiled = property(lambda self: built.get(self.name, False))


@patch
def p7_ignore_jit_logger():
    """logger.info in build_and_load; tell Dynamo to drop calls to it."""
    torch._dynamo.config.ignore_logging_functions.add(core.logger.info)


@patch
def p8_preloaded_ffi_module():
    """JitSpec.load calls into the FFI loader (C); hand back the module loaded at start-up."""
    for spec in core.jit_spec_registry:
        PRELOADED[spec.name] = spec.load(spec.jit_library_path)
    core.JitSpec.load = lambda self, so_path: PRELOADED[self.name]


@patch
def p9_module_constant():
    """get_fp4_quantization_module builds a SimpleNamespace; resolve it once into a constant."""
    modules = {}
    for backend in ("120",):
        modules[backend] = fp4_quantization.get_fp4_quantization_module(backend)
    fp4_quantization.get_fp4_quantization_module = lambda backend: modules[backend]


def quantize_block(x: torch.Tensor, input_scale_inv: torch.Tensor) -> torch.Tensor:
    x_fp4, x_sf = fakeinfer.fp4_quantize(x, input_scale_inv)
    return x_fp4.float().sum() + x_sf[: x.shape[0]].float().sum()


def main() -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("--round", type=int, default=1)
    ap.add_argument("--graph-breaks", action="store_true", help="no patches, fullgraph=False")
    args = ap.parse_args()

    torch.manual_seed(0)
    x = torch.randn(16, 128, dtype=torch.bfloat16)
    input_scale_inv = torch.tensor([448.0 * 6.0 / 4.0])

    if not args.graph_breaks:
        # eager warm-up, as a server does while loading weights: builds and loads the JIT op,
        # fills every functools.cache on the way.  (Skipped for the graph-break listing: there
        # the first call happens under torch.compile, so every helper frame is traced once.)
        quantize_block(x, input_scale_inv)

    fullgraph = not args.graph_breaks
    applied = [] if args.graph_breaks else PATCHES[: args.round - 1]
    for p in applied:
        p()
    print(f"fp4 round {args.round}: fullgraph={fullgraph}, patches applied: "
          f"{', '.join(p.__name__ for p in applied) or 'none'}", flush=True)

    compiled = torch.compile(quantize_block, backend="eager", fullgraph=fullgraph)
    out = compiled(x, input_scale_inv)
    print(f"compiled fp4 path ran: {out.item():.1f}", flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
