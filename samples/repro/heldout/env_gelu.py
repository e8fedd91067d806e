"""An activation that picks its approximation from an environment variable, read in forward."""

import os

import torch
from _run import compile_run


class EnvGelu(torch.nn.Module):
    def forward(self, x):
        approx = os.environ.get("MODEL_GELU_APPROX", "tanh")
        if approx == "tanh":
            return torch.nn.functional.gelu(x, approximate="tanh")
        return torch.nn.functional.gelu(x)


if __name__ == "__main__":
    torch.manual_seed(0)
    compile_run(EnvGelu(), torch.randn(4, 16))
