"""A serving stack's piecewise compile backend (stands in for SGLang's / vLLM's own torch.compile backends)."""

import torch


class SplittingBackend:
    """Splits the FX graph at attention ops; raises when it finds none (a bug in the backend itself)."""

    splitting_ops = ("fakeserve.unified_attention",)

    def __call__(self, gm: torch.fx.GraphModule, example_inputs):
        targets = {str(n.target) for n in gm.graph.nodes if n.op == "call_function"}
        if not targets.intersection(self.splitting_ops):
            raise AssertionError(  # expect: lib-backend
                f"SplittingBackend: expected a splitting op {list(self.splitting_ops)} in the graph, found none "
                f"among {len(gm.graph.nodes)} nodes")
        return gm.forward
