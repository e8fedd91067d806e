"""A robust scaler that takes the 99th percentile with numpy on the detached activations."""

import numpy as np
import torch
from _run import compile_run


class RobustScale(torch.nn.Module):
    def forward(self, x):
        p99 = np.percentile(x.detach().cpu().numpy(), 99)
        return x / float(p99)


if __name__ == "__main__":
    torch.manual_seed(0)
    compile_run(RobustScale(), torch.rand(8, 16) + 0.1)
