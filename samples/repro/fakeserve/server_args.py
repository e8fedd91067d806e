import argparse
import dataclasses
from typing import List, Optional


@dataclasses.dataclass
class ServerArgs:
    model_path: str = "nvidia/Llama-3.1-8B-Instruct-NVFP4"
    quantization: Optional[str] = "modelopt_fp4"
    dtype: str = "bfloat16"
    tp_size: int = 1
    tp_rank: int = 0
    enable_torch_compile: bool = False
    torch_compile_max_bs: int = 4
    disable_piecewise_cuda_graph: bool = False
    piecewise_cuda_graph_max_tokens: int = 64
    piecewise_cuda_graph_tokens: Optional[List[int]] = None
    compile_backend: str = "eager"  # CPU stand-in for inductor

    @classmethod
    def from_cli(cls, argv=None) -> "ServerArgs":
        ap = argparse.ArgumentParser(prog="python -m fakeserve.launch_server")
        ap.add_argument("--model-path", default=cls.model_path)
        ap.add_argument("--quantization", default=cls.quantization)
        ap.add_argument("--tp-size", type=int, default=1)
        ap.add_argument("--tp-rank", type=int, default=0)
        ap.add_argument("--enable-torch-compile", action="store_true")
        ap.add_argument("--torch-compile-max-bs", type=int, default=cls.torch_compile_max_bs)
        ap.add_argument("--disable-piecewise-cuda-graph", action="store_true")
        ap.add_argument("--piecewise-cuda-graph-max-tokens", type=int, default=cls.piecewise_cuda_graph_max_tokens)
        ns = ap.parse_args(argv)
        quant = None if ns.quantization in (None, "", "none") else ns.quantization
        return cls(
            model_path=ns.model_path,
            quantization=quant,
            tp_size=ns.tp_size,
            tp_rank=ns.tp_rank,
            enable_torch_compile=ns.enable_torch_compile,
            torch_compile_max_bs=ns.torch_compile_max_bs,
            disable_piecewise_cuda_graph=ns.disable_piecewise_cuda_graph,
            piecewise_cuda_graph_max_tokens=ns.piecewise_cuda_graph_max_tokens,
        )
