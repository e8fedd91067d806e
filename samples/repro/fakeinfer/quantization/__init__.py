from .fp4_quantization import (  # noqa: F401
    fp4_quantize,
    get_fp4_quantization_module,
    nvfp4_quantize,
)
