"""FP4 quantization entry points (mimics flashinfer/quantization/fp4_quantization.py, v0.6.7-era)."""

import functools
from types import SimpleNamespace
from typing import Optional, Tuple

import torch

from ..api_logging import flashinfer_api
from ..jit import JitSpec
from ..jit import env as jit_env
from ..jit.core import common_nvcc_flags, gen_jit_spec
from ..jit.cpp_ext import get_cuda_arch_flags, is_cuda_version_at_least
from ..utils import (
    device_support_pdl,
    get_compute_capability,
    register_custom_op,
    register_fake_op,
    round_up,
)
from . import _kernels  # noqa: F401  (registers the symbols the loaded module exports)


def gen_fp4_quantization_sm100_module() -> JitSpec:
    return gen_fp4_quantization_module(get_cuda_arch_flags("100") + common_nvcc_flags, "100")


def gen_fp4_quantization_sm103_module() -> JitSpec:
    return gen_fp4_quantization_module(get_cuda_arch_flags("103") + common_nvcc_flags, "103")


def gen_fp4_quantization_sm90_module() -> JitSpec:
    return gen_fp4_quantization_module(get_cuda_arch_flags("90") + common_nvcc_flags, "90")


def gen_fp4_quantization_sm110_module() -> JitSpec:
    return gen_fp4_quantization_module(get_cuda_arch_flags("110") + common_nvcc_flags, "110")


def gen_fp4_quantization_sm120_module() -> JitSpec:
    return gen_fp4_quantization_module(get_cuda_arch_flags("120") + common_nvcc_flags, "120")  # frame: gen-sm120


def gen_fp4_quantization_sm121_module() -> JitSpec:
    return gen_fp4_quantization_module(get_cuda_arch_flags("121") + common_nvcc_flags, "121")


def gen_fp4_quantization_module(nvcc_flags, device_arch: str) -> JitSpec:
    return gen_jit_spec(  # frame: gen-jit-spec
        f"fp4_quantization_{device_arch}",
        [
            "nv_internal/tensorrt_llm/kernels/quantization.cu",
            "nv_internal/tensorrt_llm/thop/fp4Quantize.cpp",
            "nv_internal/tensorrt_llm/thop/fp4Op.cpp",
            "nv_internal/cpp/common/envUtils.cpp",
            "nv_internal/cpp/common/logger.cpp",
        ],
        extra_cuda_cflags=nvcc_flags
        + [
            "-DENABLE_BF16",
            "-DENABLE_FP8",
            "-DENABLE_FP4" if is_cuda_version_at_least("12.8") else "",  # frame: cuda-version-check
        ],
        extra_cflags=["-DENABLE_BF16", "-DENABLE_FP8"],
        extra_ldflags=["-lcuda"],
        extra_include_paths=["nv_internal", "nv_internal/include"],
    )


@functools.cache
def get_fp4_quantization_module(backend: str = "100"):
    backend_modules = {
        "100": gen_fp4_quantization_sm100_module,
        "103": gen_fp4_quantization_sm103_module,
        "90": gen_fp4_quantization_sm90_module,
        "110": gen_fp4_quantization_sm110_module,
        "120": gen_fp4_quantization_sm120_module,
        "121": gen_fp4_quantization_sm121_module,
    }
    if backend not in backend_modules:
        raise ValueError(f"Invalid backend: {backend}")
    module = backend_modules[backend]().build_and_load()  # frame: build-and-load

    @register_custom_op("fakeinfer::fp4_quantize_sm100", mutates_args=())
    def fp4_quantize_sm100(
        input: torch.Tensor,
        global_scale: Optional[torch.Tensor] = None,
        sf_vec_size: int = 16,
        sf_use_ue8m0: bool = False,
        is_sf_swizzled_layout: bool = True,
        is_sf_8x4_layout: bool = False,
        enable_pdl: Optional[bool] = None,
    ) -> Tuple[torch.Tensor, torch.Tensor]:
        if enable_pdl is None:
            enable_pdl = device_support_pdl(input.device)
        return module.fp4_quantize(
            input, global_scale, sf_vec_size, sf_use_ue8m0, is_sf_swizzled_layout, is_sf_8x4_layout, enable_pdl
        )

    @register_fake_op("fakeinfer::fp4_quantize_sm100")
    def _fake_fp4_quantize_sm100(
        input: torch.Tensor,
        global_scale: Optional[torch.Tensor] = None,
        sf_vec_size: int = 16,
        sf_use_ue8m0: bool = False,
        is_sf_swizzled_layout: bool = True,
        is_sf_8x4_layout: bool = False,
        enable_pdl: Optional[bool] = None,
    ) -> Tuple[torch.Tensor, torch.Tensor]:
        m, k = input.shape
        rows = round_up(m, 8 if is_sf_8x4_layout else 128) if is_sf_swizzled_layout else m
        cols = round_up(k // sf_vec_size, 4) if is_sf_swizzled_layout else k // sf_vec_size
        return (
            input.new_empty((m, k // 2), dtype=torch.uint8),
            input.new_empty((rows, cols), dtype=torch.uint8),
        )

    return SimpleNamespace(fp4_quantize_sm100=fp4_quantize_sm100)  # expect: namespace


@flashinfer_api
def fp4_quantize(
    input: torch.Tensor,
    global_scale: Optional[torch.Tensor] = None,
    sf_vec_size: int = 16,
    sf_use_ue8m0: bool = False,
    is_sf_swizzled_layout: bool = True,
    is_sf_8x4_layout: bool = False,
    enable_pdl: Optional[bool] = None,
) -> Tuple[torch.Tensor, torch.Tensor]:
    """Quantize a [M, K] half/bf16/float tensor to packed NVFP4 plus block scale factors."""
    if sf_vec_size != 16 and sf_vec_size != 32:
        raise NotImplementedError("sf_vec_size can only be 16 or 32")
    # for column major input, we need to transpose the input
    is_column_major = input.stride(-2) == 1
    if is_column_major:
        input = input.transpose(-2, -1)
    assert input.shape[-1] % sf_vec_size == 0
    if enable_pdl is None:
        enable_pdl = device_support_pdl(input.device)
    major, minor = get_compute_capability(input.device)
    x_q, sf = get_fp4_quantization_module(f"{major}{minor}").fp4_quantize_sm100(  # frame: getmod-call
        input, global_scale, sf_vec_size, sf_use_ue8m0, is_sf_swizzled_layout, is_sf_8x4_layout, enable_pdl
    )
    sf = sf.reshape((-1, input.shape[-1] // sf_vec_size))
    if is_column_major:
        x_q = x_q.transpose(-2, -1)
        sf = sf.transpose(-2, -1)
    return x_q, sf


def nvfp4_quantize(a, a_global_sf, sfLayout: str = "128x4", do_shuffle: bool = False, sf_vec_size: int = 16, enable_pdl=None):
    if do_shuffle:
        raise NotImplementedError("shuffled layouts are not emulated")
    return fp4_quantize(
        a, a_global_sf, sf_vec_size, False, sfLayout != "linear", sfLayout == "8x4", enable_pdl
    )
