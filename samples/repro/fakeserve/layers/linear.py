from typing import Optional

import torch


class UnquantizedLinearMethod:
    def create_weights(self, layer: torch.nn.Module, input_size: int, output_size: int, params_dtype):
        layer.weight = torch.nn.Parameter(torch.empty(output_size, input_size, dtype=params_dtype), requires_grad=False)

    def process_weights_after_loading(self, layer: torch.nn.Module) -> None:
        return None

    def apply(self, layer: torch.nn.Module, x: torch.Tensor, bias: Optional[torch.Tensor] = None) -> torch.Tensor:
        return torch.nn.functional.linear(x, layer.weight, bias)


class LinearBase(torch.nn.Module):
    def __init__(self, input_size: int, output_size: int, quant_config=None, prefix: str = "",
                 params_dtype=torch.bfloat16):
        super().__init__()
        self.input_size = input_size
        self.output_size = output_size
        self.prefix = prefix
        if quant_config is None:
            self.quant_method = UnquantizedLinearMethod()
        else:
            self.quant_method = quant_config.get_quant_method(self, prefix)
        self.quant_method.create_weights(self, input_size, output_size, params_dtype)
        self.bias = None

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.quant_method.apply(self, x, self.bias)


class ReplicatedLinear(LinearBase):
    pass


class MergedColumnParallelLinear(LinearBase):
    pass


class RowParallelLinear(LinearBase):
    pass


class QKVParallelLinear(LinearBase):
    pass
