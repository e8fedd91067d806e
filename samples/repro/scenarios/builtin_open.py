"""A fused-MoE layer that reads its tuned kernel config file on the hot path."""

import json
import os

import torch

from ._harness import compile_and_run

CONFIG_DIR = os.path.join(os.path.dirname(__file__), "data")


def get_moe_configs(num_experts: int, n: int) -> dict:
    path = os.path.join(CONFIG_DIR, f"moe_config_E{num_experts}_N{n}.json")  # expect: path-join
    with open(path) as f:  # expect: open
        return json.load(f)


def fused_moe(x: torch.Tensor, w: torch.Tensor, router_logits: torch.Tensor) -> torch.Tensor:
    config = get_moe_configs(w.shape[0], w.shape[2])
    block_m = config["16"]["BLOCK_SIZE_M"]
    topk = torch.softmax(router_logits, dim=-1).topk(2, dim=-1)
    out = torch.einsum("td,edn->ten", x, w)
    return (out.gather(1, topk.indices[..., None].expand(-1, -1, out.shape[-1])) * topk.values[..., None]).sum(1) * block_m


def main(fullgraph: bool) -> None:
    compile_and_run(fused_moe, torch.randn(4, 32), torch.randn(8, 32, 64), torch.randn(4, 8), fullgraph=fullgraph)
