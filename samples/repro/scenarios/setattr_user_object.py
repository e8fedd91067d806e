"""A forward() that caches the batch size on a plain config object with a custom __setattr__."""

import torch

from ._harness import compile_and_run


class RuntimeConfig:
    def __init__(self):
        object.__setattr__(self, "_frozen", False)
        self.last_batch = 0

    def __setattr__(self, name, value):
        if getattr(self, "_frozen", False):
            raise AttributeError(f"{name} is frozen")
        object.__setattr__(self, name, value)


CONFIG = RuntimeConfig()


def embed(input_ids: torch.Tensor, table: torch.Tensor) -> torch.Tensor:
    setattr(CONFIG, "last_batch", input_ids.shape[0])  # expect: setattr
    return table[input_ids]


def main(fullgraph: bool) -> None:
    compile_and_run(embed, torch.tensor([1, 5, 7]), torch.randn(16, 8), fullgraph=fullgraph)
