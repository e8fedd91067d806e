from . import env  # noqa: F401
from .core import JitSpec, gen_jit_spec, jit_spec_registry, logger  # noqa: F401
from .cpp_ext import get_cuda_path, get_cuda_version, is_cuda_version_at_least  # noqa: F401
