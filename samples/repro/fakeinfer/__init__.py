"""fakeinfer: a pure-Python stand-in for FlashInfer's JIT-backed Python API.

It exists only to give torch._dynamo the same things to trip over that FlashInfer
gives it (cached helpers that shell out, a JIT spec registry that stamps the time,
pathlib checks, file locks, a loaded "FFI" module, SimpleNamespace wrappers), so
crashlens can be tested on real tracebacks.  No CUDA is needed: the "kernels" are
torch ops on CPU.
"""

__version__ = "0.6.7.post3+crashlens.repro"

from .quantization import fp4_quantize, nvfp4_quantize  # noqa: F401
from .utils import get_compute_capability, device_support_pdl  # noqa: F401
