"""A tiny Llama with quantizable linears (shapes only loosely like the real thing)."""

import dataclasses

import torch

from fakeserve.layers.layernorm import RMSNorm
from fakeserve.layers.linear import MergedColumnParallelLinear, QKVParallelLinear, RowParallelLinear


@dataclasses.dataclass
class LlamaConfig:
    vocab_size: int = 512
    hidden_size: int = 128
    intermediate_size: int = 256
    num_hidden_layers: int = 2
    num_attention_heads: int = 4
    rms_norm_eps: float = 1e-5


class LlamaMLP(torch.nn.Module):
    def __init__(self, config: LlamaConfig, quant_config=None, prefix: str = ""):
        super().__init__()
        self.gate_up_proj = MergedColumnParallelLinear(config.hidden_size, 2 * config.intermediate_size, quant_config, f"{prefix}.gate_up_proj")
        self.down_proj = RowParallelLinear(config.intermediate_size, config.hidden_size, quant_config, f"{prefix}.down_proj")

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        gate_up = self.gate_up_proj(x)
        gate, up = gate_up.chunk(2, dim=-1)
        return self.down_proj(torch.nn.functional.silu(gate) * up)


class LlamaAttention(torch.nn.Module):
    def __init__(self, config: LlamaConfig, quant_config=None, prefix: str = ""):
        super().__init__()
        self.num_heads = config.num_attention_heads
        self.head_dim = config.hidden_size // config.num_attention_heads
        self.qkv_proj = QKVParallelLinear(config.hidden_size, 3 * config.hidden_size, quant_config, f"{prefix}.qkv_proj")
        self.o_proj = RowParallelLinear(config.hidden_size, config.hidden_size, quant_config, f"{prefix}.o_proj")

    def forward(self, hidden_states: torch.Tensor) -> torch.Tensor:
        qkv = self.qkv_proj(hidden_states)
        q, k, v = qkv.view(-1, 3, self.num_heads, self.head_dim).unbind(1)
        attn = torch.nn.functional.scaled_dot_product_attention(
            q.transpose(0, 1), k.transpose(0, 1), v.transpose(0, 1), is_causal=True
        )
        return self.o_proj(attn.transpose(0, 1).reshape(hidden_states.shape))


class LlamaDecoderLayer(torch.nn.Module):
    def __init__(self, config: LlamaConfig, layer_id: int, quant_config=None):
        super().__init__()
        prefix = f"model.layers.{layer_id}"
        self.input_layernorm = RMSNorm(config.hidden_size, config.rms_norm_eps)
        self.self_attn = LlamaAttention(config, quant_config, f"{prefix}.self_attn")
        self.post_attention_layernorm = RMSNorm(config.hidden_size, config.rms_norm_eps)
        self.mlp = LlamaMLP(config, quant_config, f"{prefix}.mlp")

    def forward(self, hidden_states: torch.Tensor) -> torch.Tensor:
        hidden_states = hidden_states + self.self_attn(self.input_layernorm(hidden_states))
        return hidden_states + self.mlp(self.post_attention_layernorm(hidden_states))


class LlamaModel(torch.nn.Module):
    def __init__(self, config: LlamaConfig, quant_config=None):
        super().__init__()
        self.embed_tokens = torch.nn.Embedding(config.vocab_size, config.hidden_size, dtype=torch.bfloat16)
        self.layers = torch.nn.ModuleList(
            [LlamaDecoderLayer(config, i, quant_config) for i in range(config.num_hidden_layers)]
        )
        self.norm = RMSNorm(config.hidden_size, config.rms_norm_eps)

    def forward(self, input_ids: torch.Tensor) -> torch.Tensor:
        hidden_states = self.embed_tokens(input_ids)
        for layer in self.layers:
            hidden_states = layer(hidden_states)
        return self.norm(hidden_states)


class LlamaForCausalLM(torch.nn.Module):
    def __init__(self, config: LlamaConfig, quant_config=None):
        super().__init__()
        self.config = config
        self.model = LlamaModel(config, quant_config)
        self.lm_head = torch.nn.Linear(config.hidden_size, config.vocab_size, bias=False, dtype=torch.bfloat16)

    @torch.no_grad()
    def load_dummy_weights(self) -> None:
        for module in self.modules():
            method = getattr(module, "quant_method", None)
            if method is None:
                continue
            dense = torch.randn(module.output_size, module.input_size, dtype=torch.bfloat16) * 0.05
            if hasattr(method, "load_checkpoint_weight"):
                method.load_checkpoint_weight(module, dense)
            else:
                module.weight.data = dense
            method.process_weights_after_loading(module)

    @torch.no_grad()
    def forward(self, input_ids: torch.Tensor) -> torch.Tensor:
        hidden_states = self.model(input_ids)
        return self.lm_head(hidden_states)
