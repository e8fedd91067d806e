"""Per-request adapter strength: the base adapter module is copy.deepcopy'd and its weight scaled in forward."""

import copy

import torch
from _run import compile_run


class AdapterHost(torch.nn.Module):
    def __init__(self, d=16, r=4):
        super().__init__()
        self.base = torch.nn.Linear(d, d)
        self.adapter = torch.nn.Sequential(torch.nn.Linear(d, r, bias=False), torch.nn.Linear(r, d, bias=False))

    def forward(self, x, strength=0.5):
        scaled = copy.deepcopy(self.adapter)
        with torch.no_grad():
            scaled[1].weight.mul_(strength)
        return self.base(x) + scaled(x)


if __name__ == "__main__":
    torch.manual_seed(0)
    compile_run(AdapterHost(), torch.randn(4, 16))
