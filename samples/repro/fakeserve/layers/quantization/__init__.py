"""Quantization method registry; methods are imported lazily, on first use."""

import importlib
from typing import Optional

_QUANTIZATION_METHODS = {
    "modelopt_fp4": ("fakeserve.layers.quantization.modelopt_quant", "ModelOptFp4Config"),
    "mxfp4": ("fakeserve.layers.quantization.mxfp4", "Mxfp4Config"),
}


def get_quantization_config(name: Optional[str]):
    if name is None:
        return None
    if name not in _QUANTIZATION_METHODS:
        raise ValueError(f"Unknown quantization method: {name}. Available: {sorted(_QUANTIZATION_METHODS)}")
    module_name, class_name = _QUANTIZATION_METHODS[name]
    module = importlib.import_module(module_name)
    return getattr(module, class_name)()
