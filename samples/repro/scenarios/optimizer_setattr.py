"""A compiled train step that notes the batch size on its optimizer (an attribute dynamo cannot mutate).

torch 2.1 words it `setattr(UserDefinedObjectVariable) <slot wrapper '__setattr__' of 'object' objects>`,
2.4-2.7 `setattr(OptimizerVariable(SGD), last_batch, ...)`.
"""

import torch

from ._harness import compile_and_run

LAYER = torch.nn.Linear(8, 8)
OPTIMIZER = torch.optim.SGD(LAYER.parameters(), lr=0.1)


def train_step(x: torch.Tensor) -> torch.Tensor:
    OPTIMIZER.last_batch = x.shape[0]  # expect: optimizer-setattr
    return LAYER(x).relu()


def main(fullgraph: bool) -> None:
    compile_and_run(train_step, torch.randn(4, 8), fullgraph=fullgraph)
