"""Piecewise CUDA graph runner: compiles the language model with fullgraph=True, then warms up
every captured token count (SGLang: sglang/srt/model_executor/piecewise_cuda_graph_runner.py)."""

import torch

from fakeserve.compilation.piecewise_context_manager import enable_piecewise_cuda_graph
from fakeserve.compile import install_torch_compiled


def get_capture_num_tokens(max_tokens: int):
    nums = [4, 8, 16, 32, 64, 128, 256, 512, 1024, 2048, 4096, 8192]
    return sorted((n for n in nums if n <= max_tokens), reverse=True)


class PiecewiseCudaGraphRunner:
    def __init__(self, model_runner):
        self.model_runner = model_runner
        self.model = model_runner.model
        self.capture_num_tokens = get_capture_num_tokens(model_runner.server_args.piecewise_cuda_graph_max_tokens)
        install_torch_compiled(self.model.model, fullgraph=True, backend=model_runner.server_args.compile_backend)
        with enable_piecewise_cuda_graph():
            self.warmup_torch_compile()
        self.graphs = {n: None for n in self.capture_num_tokens}

    def warmup_torch_compile(self):
        for num_tokens in self.capture_num_tokens:
            input_ids = torch.zeros(num_tokens, dtype=torch.long)
            self.model.forward(input_ids)

    def replay(self, input_ids: torch.Tensor) -> torch.Tensor:
        return self.model.forward(input_ids)
