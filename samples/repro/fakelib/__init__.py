"""fakelib: a small kernel library look-alike whose Python wrappers do things dynamo cannot trace."""

from .norm import fused_add_rms_norm, rms_norm  # noqa: F401
from .cast import scaled_cast  # noqa: F401
from .tuning import tuned_block_size  # noqa: F401
