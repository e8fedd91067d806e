"""Dynamic activation scaling: the scale is the input's abs-max as a Python float, floored with max()."""

import torch
from _run import compile_run


class AbsMaxScale(torch.nn.Module):
    def __init__(self, d=16):
        super().__init__()
        self.fc = torch.nn.Linear(d, d)

    def forward(self, x):
        amax = x.abs().max().item()
        scale = max(amax, 1e-6) / 127.0
        return self.fc(torch.round(x / scale) * scale)


if __name__ == "__main__":
    torch.manual_seed(0)
    compile_run(AbsMaxScale(), torch.randn(4, 16))
