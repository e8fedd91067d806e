"""Weights held as a __torch_dispatch__ wrapper subclass (int8 data + scale) made in forward, without __tensor_flatten__."""

import torch
from torch.utils._pytree import tree_map
from _run import compile_run


class ScaledInt8(torch.Tensor):
    @staticmethod
    def __new__(cls, data, scale):
        return torch.Tensor._make_wrapper_subclass(cls, data.shape, dtype=torch.float32)

    def __init__(self, data, scale):
        self.data_i8 = data
        self.scale = scale

    @classmethod
    def __torch_dispatch__(cls, func, types, args=(), kwargs=None):
        unwrap = lambda t: t.data_i8.float() * t.scale if isinstance(t, ScaledInt8) else t
        return func(*tree_map(unwrap, args), **tree_map(unwrap, kwargs or {}))


class Int8Linear(torch.nn.Module):
    def __init__(self, d=16):
        super().__init__()
        w = torch.randn(d, d)
        scale = w.abs().amax() / 127
        self.register_buffer("w_i8", torch.round(w / scale).to(torch.int8))
        self.register_buffer("w_scale", scale)

    def forward(self, x):
        return torch.nn.functional.linear(x, ScaledInt8(self.w_i8, self.w_scale))


def main():
    torch.manual_seed(0)
    compile_run(Int8Linear(), torch.randn(3, 16))


if __name__ == "__main__":
    main()
