"""A model calling real FlashInfer `fp4_quantize`, compiled with fullgraph=True (needs CUDA and flashinfer).

    python samples/repro/cuda/fp4_model.py

It runs the block eagerly twice (a server's warm-up: JIT build, every functools.cache filled), then
compiled with fullgraph=True, and compares: the compiled outputs must have eager's shapes and dtypes,
and eager's values wherever the two eager runs agree (on sm_90 FP4 scale-factor bytes differ between
two eager calls). Exit 0 when they do; an uncaught dynamo error otherwise, as a server would print.
"""

import sys

import flashinfer
import torch


def quantize_block(x: torch.Tensor, global_scale: torch.Tensor):
    h = torch.nn.functional.silu(x) * 2.0
    x_fp4, x_sf = flashinfer.fp4_quantize(h, global_scale)
    return x_fp4, x_sf, h.float().sum()


def main() -> int:
    torch.manual_seed(0)
    x = torch.randn(256, 512, dtype=torch.bfloat16, device="cuda")
    global_scale = torch.tensor([448.0 * 6.0 / 4.0], dtype=torch.float32, device="cuda")
    eager1 = quantize_block(x, global_scale)
    eager2 = quantize_block(x, global_scale)
    torch.cuda.synchronize()
    print(f"torch {torch.__version__}, flashinfer {flashinfer.__version__}, "
          f"{torch.cuda.get_device_name()} sm_{''.join(map(str, torch.cuda.get_device_capability()))}", flush=True)
    compiled = torch.compile(quantize_block, fullgraph=True)
    out = compiled(x, global_scale)
    torch.cuda.synchronize()
    ok = True
    for i, (c, a, b) in enumerate(zip(out, eager1, eager2)):
        same_meta = c.shape == a.shape and c.dtype == a.dtype
        agree = (a.view(torch.uint8) == b.view(torch.uint8)) if a.dtype == torch.uint8 else torch.ones_like(a, dtype=torch.bool)
        if a.dtype == torch.uint8:
            equal = bool(((c.view(torch.uint8) == a.view(torch.uint8)) | ~agree).all())
        else:
            equal = bool(torch.allclose(c, a))
        print(f"output {i}: compiled {tuple(c.shape)} {c.dtype}, eager {tuple(a.shape)} {a.dtype}; "
              f"eager runs agree on {int(agree.sum())}/{agree.numel()} elements; "
              f"compiled equals eager there: {equal}", flush=True)
        ok = ok and same_meta and equal
    print(f"compiled fp4 block {'matches' if ok else 'DIFFERS FROM'} eager", flush=True)
    return 0 if ok else 3


if __name__ == "__main__":
    sys.exit(main())
