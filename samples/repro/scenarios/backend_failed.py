"""A serving stack's custom compile backend that rejects a graph it cannot split."""

import torch

from ._harness import compile_and_run


class PiecewiseBackend:
    """Splits the FX graph at attention ops; raises if it finds none (stands in for a real backend bug)."""

    def __init__(self, splitting_ops=("fakekern.unified_attention",)):
        self.splitting_ops = splitting_ops

    def __call__(self, gm: torch.fx.GraphModule, example_inputs):
        targets = {str(n.target) for n in gm.graph.nodes if n.op == "call_function"}
        if not targets.intersection(self.splitting_ops):
            raise RuntimeError(  # expect: backend
                f"PiecewiseBackend: no splitting op {list(self.splitting_ops)} found in a graph of "
                f"{len(gm.graph.nodes)} nodes; cannot build piecewise CUDA graphs"
            )
        return gm.forward


def layer(x: torch.Tensor, w: torch.Tensor) -> torch.Tensor:
    return torch.relu(x @ w)


def main(fullgraph: bool) -> None:
    compile_and_run(layer, torch.randn(4, 16), torch.randn(16, 16), fullgraph=fullgraph, backend=PiecewiseBackend())
