"""A model that registers a debug forward hook lazily, from inside forward()."""

import torch

from ._harness import compile_and_run


def _record_output(module, args, output):
    module.last_output_norm = output.norm()


class DecoderLayer(torch.nn.Module):
    def __init__(self, hidden: int = 16):
        super().__init__()
        self.proj = torch.nn.Linear(hidden, hidden)
        self._hooked = False

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        if not self._hooked:
            self.proj.register_forward_hook(_record_output)  # expect: hook
            self._hooked = True
        return torch.relu(self.proj(x))


def main(fullgraph: bool) -> None:
    compile_and_run(DecoderLayer(), torch.randn(4, 16), fullgraph=fullgraph)
