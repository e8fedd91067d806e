import torch

from fakeserve.compile import torch_compile_decode
from fakeserve.layers.quantization import get_quantization_config
from fakeserve.models.llama import LlamaConfig, LlamaForCausalLM
from fakeserve.server_args import ServerArgs


class ModelRunner:
    def __init__(self, server_args: ServerArgs, tp_rank: int):
        self.server_args = server_args
        self.tp_rank = tp_rank
        self.model_config = LlamaConfig()
        self.max_total_num_tokens = 4096
        self.piecewise_cuda_graph_runner = None
        self.initialize()

    def initialize(self):
        torch.manual_seed(1234 + self.tp_rank)
        self.load_model()
        if self.server_args.enable_torch_compile:
            self.init_torch_compile()
        if not self.server_args.disable_piecewise_cuda_graph and not self.server_args.enable_torch_compile:
            self.init_piecewise_cuda_graphs()

    def load_model(self):
        quant_config = get_quantization_config(self.server_args.quantization)
        self.model = LlamaForCausalLM(self.model_config, quant_config=quant_config)
        self.model.load_dummy_weights()
        self.dtype = torch.bfloat16

    def init_torch_compile(self):
        # --enable-torch-compile: the decode forward is compiled without fullgraph and captured
        # for every batch size up to --torch-compile-max-bs
        self.decode_forward = torch_compile_decode(self.model.forward, backend=self.server_args.compile_backend)
        for bs in range(1, self.server_args.torch_compile_max_bs + 1):
            input_ids = torch.zeros(bs, dtype=torch.long)
            self.decode_forward(input_ids)

    def init_piecewise_cuda_graphs(self):
        from fakeserve.model_executor.piecewise_cuda_graph_runner import PiecewiseCudaGraphRunner

        self.piecewise_cuda_graph_runner = PiecewiseCudaGraphRunner(self)

    def forward(self, input_ids: torch.Tensor) -> torch.Tensor:
        if self.piecewise_cuda_graph_runner is not None:
            return self.piecewise_cuda_graph_runner.replay(input_ids)
        if self.server_args.enable_torch_compile:
            return self.decode_forward(input_ids)
        return self.model.forward(input_ids)
