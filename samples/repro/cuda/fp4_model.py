"""A model calling real FlashInfer `fp4_quantize`, compiled with fullgraph=True (needs CUDA and flashinfer).

    python samples/repro/cuda/fp4_model.py

It runs the block eagerly three times (a server's warm-up: JIT build, every functools.cache filled),
then compiled with fullgraph=True, and prints the comparison: the compiled outputs must have eager's
shapes and dtypes, and eager's values wherever the eager runs agree (on sm_90 FP4 scale-factor bytes
can differ between two eager calls). The exit status says only whether it ran: 0, or the uncaught
dynamo error a server would print.
"""

import sys

import flashinfer
import torch


def quantize_block(x: torch.Tensor, global_scale: torch.Tensor):
    h = x * 2.0  # exact in bf16 (a power of two), whatever precision the compiled code computes it in
    x_fp4, x_sf = flashinfer.fp4_quantize(h, global_scale)
    return x_fp4, x_sf, h.float().sum()


def main() -> int:
    torch.manual_seed(0)
    x = torch.randn(256, 512, dtype=torch.bfloat16, device="cuda")
    global_scale = torch.tensor([448.0 * 6.0 / 4.0], dtype=torch.float32, device="cuda")
    eager = [quantize_block(x, global_scale) for _ in range(3)]
    torch.cuda.synchronize()
    print(f"torch {torch.__version__}, flashinfer {flashinfer.__version__}, "
          f"{torch.cuda.get_device_name()} sm_{''.join(map(str, torch.cuda.get_device_capability()))}", flush=True)
    compiled = torch.compile(quantize_block, fullgraph=True)
    out = compiled(x, global_scale)
    torch.cuda.synchronize()
    ok = True
    for i, c in enumerate(out):
        runs = [e[i] for e in eager]
        a = runs[0]
        same_meta = c.shape == a.shape and c.dtype == a.dtype
        if a.dtype == torch.uint8:
            agree = torch.ones_like(a, dtype=torch.bool)
            for b in runs[1:]:
                agree &= a == b
            equal = bool(((c == a) | ~agree).all()) if same_meta else False
            where = f"eager runs agree on {int(agree.sum())}/{agree.numel()} bytes"
        else:
            equal = bool(torch.allclose(c, a, rtol=1e-3, atol=1e-3))  # a float sum: summation order may differ
            where = "float, compared with rtol=atol=1e-3"
        print(f"output {i}: compiled {tuple(c.shape)} {c.dtype}, eager {tuple(a.shape)} {a.dtype}; {where}; "
              f"compiled equals eager there: {equal}", flush=True)
        ok = ok and same_meta and equal
    print(f"compiled fp4 block {'matches' if ok else 'DIFFERS FROM'} eager", flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
