"""NVFP4 GEMM emulated with torch ops (stands in for cutlass/flashinfer mm_fp4)."""

import torch

E2M1_VALUES = (0.0, 0.5, 1.0, 1.5, 2.0, 3.0, 4.0, 6.0)


def dequantize_nvfp4(x_fp4: torch.Tensor, sf: torch.Tensor, global_scale: torch.Tensor, sf_vec_size: int = 16):
    m = x_fp4.shape[0]
    k = x_fp4.shape[1] * 2
    lut = torch.tensor(E2M1_VALUES, dtype=torch.float32, device=x_fp4.device)
    lo = x_fp4 & 0x0F
    hi = (x_fp4 >> 4) & 0x0F
    codes = torch.stack((lo, hi), dim=-1).reshape(m, k)
    mag = lut[(codes & 0x7).long()]
    vals = torch.where((codes & 0x8) != 0, -mag, mag)
    scales = sf[:m, : k // sf_vec_size].view(torch.float8_e4m3fn).float() / global_scale
    return (vals.reshape(m, k // sf_vec_size, sf_vec_size) * scales[..., None]).reshape(m, k)


def fp4_gemm(x_fp4, w_fp4, x_sf, w_sf, x_global_scale, w_global_scale, out_dtype):
    a = dequantize_nvfp4(x_fp4, x_sf, x_global_scale)
    b = dequantize_nvfp4(w_fp4, w_sf, w_global_scale)
    return (a @ b.t()).to(out_dtype)
