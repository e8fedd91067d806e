"""What the compiled fp4_quantization_<arch>.so would export, written with torch ops.

NVFP4: values are E2M1 (4 bits, packed two per byte), every `sf_vec_size` values share an
FP8-E4M3 block scale, and a per-tensor global scale maps the block scales into FP8 range.
"""

import torch
import torch.nn.functional as F

from ..jit.ffi import register_global_func

E2M1_MAX = 6.0
E4M3_MAX = 448.0
_E2M1_BOUNDS = (0.25, 0.75, 1.25, 1.75, 2.5, 3.5, 5.0)


def _round_up(x: int, y: int) -> int:
    return (x + y - 1) // y * y


def fp4_quantize(input, global_scale, sf_vec_size, sf_use_ue8m0, is_sf_swizzled_layout, is_sf_8x4_layout, enable_pdl):
    m, k = input.shape
    x = input.float().reshape(m, k // sf_vec_size, sf_vec_size)
    if global_scale is None:
        global_scale = torch.ones(1, dtype=torch.float32, device=input.device)
    block_amax = x.abs().amax(dim=-1, keepdim=True)
    block_scale = (block_amax / E2M1_MAX * global_scale).clamp(min=2.0**-9, max=E4M3_MAX)
    block_scale = block_scale.to(torch.float8_e4m3fn)
    scaled = x / (block_scale.float() / global_scale)
    bounds = torch.tensor(_E2M1_BOUNDS, dtype=torch.float32, device=input.device)
    codes = torch.bucketize(scaled.abs().clamp(max=E2M1_MAX), bounds).to(torch.uint8)
    codes = codes | ((scaled < 0).to(torch.uint8) << 3)
    codes = codes.reshape(m, k // 2, 2)
    packed = codes[..., 0] | (codes[..., 1] << 4)
    sf = block_scale.reshape(m, k // sf_vec_size).view(torch.uint8)
    row_align = 8 if is_sf_8x4_layout else 128
    if is_sf_swizzled_layout:
        pad_rows = _round_up(m, row_align) - m
        pad_cols = _round_up(k // sf_vec_size, 4) - k // sf_vec_size
        sf = F.pad(sf, (0, pad_cols, 0, pad_rows))
    return packed, sf


for _arch in ("90", "100", "103", "110", "120", "121"):
    register_global_func(f"fp4_quantization_{_arch}", "fp4_quantize")(fp4_quantize)
