"""Record CUDA-side crash samples that the CPU wheel cannot produce (needs a GPU and a CUDA torch).

    python samples/repro/cuda/record_cuda.py OUTDIR

Each scenario runs in its own subprocess; its merged stdout+stderr is written byte for byte to
OUTDIR/cuda-<name>.log under a one-line `# crashlens sample:` header, like samples/record.py does.
"""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

SCENARIOS = {
    # .item() forces a device->host sync, which CUDA forbids while a stream is capturing.
    "capture-item": """
import torch
x = torch.randn(1024, device="cuda")
torch.cuda.synchronize()
g = torch.cuda.CUDAGraph()
with torch.cuda.graph(g):
    y = x * 2
    n = int((y > 0).sum().item())
""",
    # torch.cuda.synchronize() inside a capture.
    "capture-synchronize": """
import torch
x = torch.randn(1024, device="cuda")
g = torch.cuda.CUDAGraph()
with torch.cuda.graph(g):
    y = x + 1
    torch.cuda.synchronize()
""",
    # cudagraph trees (mode="reduce-overhead"): an output kept across replays is overwritten.
    "cudagraph-trees-overwritten": """
import torch
@torch.compile(mode="reduce-overhead")
def step(x):
    return x * 2 + 1
x = torch.randn(256, device="cuda")
for _ in range(3):
    first = step(x)
second = step(x)
print(first.sum())
""",
    # dynamo on a real GPU: torch.cuda.synchronize() inside a fullgraph region.
    "dynamo-cuda-synchronize": """
import torch
def f(x):
    y = x.sin()
    torch.cuda.synchronize()
    return y.cos()
torch.compile(f, fullgraph=True, backend="eager")(torch.randn(8, device="cuda"))
""",
}


def main() -> int:
    out = Path(sys.argv[1])
    out.mkdir(parents=True, exist_ok=True)
    import torch  # noqa: F401 - only for the header

    ver = torch.__version__
    gpu = torch.cuda.get_device_name(0) if torch.cuda.is_available() else "no GPU"
    for name, code in SCENARIOS.items():
        p = subprocess.run([sys.executable, "-c", code], stdout=subprocess.PIPE, stderr=subprocess.STDOUT, timeout=300)
        header = (f"# crashlens sample: recorded by samples/repro/cuda/record_cuda.py, scenario {name}, torch {ver}, "
                  f"python {sys.version.split()[0]}, {gpu}\n").encode()
        (out / f"cuda-{name}.log").write_bytes(header + p.stdout)
        print(name, "exit", p.returncode, len(p.stdout), "bytes")
    return 0


if __name__ == "__main__":
    sys.exit(main())
