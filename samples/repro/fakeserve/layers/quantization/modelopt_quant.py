"""ModelOpt NVFP4 linear method (mimics sglang/srt/layers/quantization/modelopt_quant.py, 0.5.10 on SM12x)."""

from typing import Optional

import torch

from fakeinfer import fp4_quantize
from fakeinfer.quantization import _kernels as _checkpoint_quantizer
from fakeserve.layers.quantization.fp4_utils import fp4_gemm


class ModelOptFp4Config:
    name = "modelopt_fp4"
    group_size = 16

    def get_quant_method(self, layer: torch.nn.Module, prefix: str):
        return ModelOptFp4LinearMethod(self)


class ModelOptFp4LinearMethod:
    """Linear method for NVFP4: activations are quantized on the fly with fp4_quantize."""

    def __init__(self, quant_config: ModelOptFp4Config):
        self.quant_config = quant_config

    def create_weights(self, layer: torch.nn.Module, input_size: int, output_size: int, params_dtype):
        if input_size % self.quant_config.group_size != 0:
            raise ValueError(f"input_size {input_size} is not divisible by group_size {self.quant_config.group_size}")
        layer.weight = torch.nn.Parameter(torch.empty(output_size, input_size // 2, dtype=torch.uint8), requires_grad=False)
        layer.weight_scale = torch.nn.Parameter(
            torch.empty(output_size, input_size // self.quant_config.group_size, dtype=torch.uint8), requires_grad=False
        )
        layer.weight_scale_2 = torch.nn.Parameter(torch.ones(1), requires_grad=False)
        layer.input_scale = torch.nn.Parameter(torch.ones(1), requires_grad=False)

    def load_checkpoint_weight(self, layer: torch.nn.Module, dense: torch.Tensor) -> None:
        # the checkpoint holds pre-quantized weights; emulate that by quantizing once with the kernel itself
        w_global = 448.0 * 6.0 / dense.abs().max().float().clamp(min=1e-6)
        w_fp4, w_sf = _checkpoint_quantizer.fp4_quantize(dense, w_global.reshape(1), 16, False, True, False, False)
        layer.weight.data = w_fp4
        layer.weight_scale.data = w_sf
        layer.weight_scale_2.data = w_global.reshape(1)
        layer.input_scale.data = torch.tensor([4.0])

    def process_weights_after_loading(self, layer: torch.nn.Module) -> None:
        layer.input_scale_inv = torch.nn.Parameter((448.0 * 6.0 / layer.input_scale).to(torch.float32), requires_grad=False)
        layer.weight_scale_interleaved = torch.nn.Parameter(layer.weight_scale.data, requires_grad=False)
        layer.alpha = torch.nn.Parameter(1.0 / (layer.input_scale_inv * layer.weight_scale_2), requires_grad=False)

    def apply(self, layer: torch.nn.Module, x: torch.Tensor, bias: Optional[torch.Tensor] = None) -> torch.Tensor:
        output_dtype = x.dtype
        x_m, _ = x.shape
        w_n, _ = layer.weight.shape

        # Quantize BF16 or FP16 to (FP4 and interleaved block scale)
        x_fp4, x_scale_interleaved = fp4_quantize(x, layer.input_scale_inv)  # frame: fp4-call

        out = fp4_gemm(
            x_fp4,
            layer.weight,
            x_scale_interleaved,
            layer.weight_scale_interleaved,
            layer.input_scale_inv,
            layer.weight_scale_2,
            output_dtype,
        )
        if bias is not None:
            out = out + bias
        return out.view(x_m, w_n)
