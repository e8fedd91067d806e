"""MXFP4 linear method for SM12x: needs a FlashInfer build that exports the SM120 MXFP4 quantizer."""

import torch

from fakeinfer.quantization import mxfp4_quantize_sm120  # noqa: F401


class Mxfp4Config:
    name = "mxfp4"

    def get_quant_method(self, layer: torch.nn.Module, prefix: str):
        raise NotImplementedError
