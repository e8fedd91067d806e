"""Not a failure: a block that compiles cleanly, run with TORCH_LOGS=dynamo (dynamo's INFO lines)."""

import torch

from _h import run


class Block(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.norm = torch.nn.LayerNorm(8)
        self.fc = torch.nn.Linear(8, 8)

    def forward(self, x):
        return x + self.fc(self.norm(x)).tanh()


def main(fullgraph):
    run(Block(), torch.randn(2, 8), fullgraph=fullgraph)
