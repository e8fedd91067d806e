"""A layer that picks its compute dtype with a torch.cuda.is_available() branch in forward."""

import torch
from _run import compile_run


class DeviceAware(torch.nn.Module):
    def __init__(self, d=16):
        super().__init__()
        self.lin = torch.nn.Linear(d, d)

    def forward(self, x):
        if torch.cuda.is_available() and torch.cuda.get_device_capability()[0] >= 8:
            return self.lin(x.to(torch.bfloat16).float())
        return self.lin(x)


if __name__ == "__main__":
    torch.manual_seed(0)
    compile_run(DeviceAware(), torch.randn(4, 16))
