"""A layer that checks free disk space under the temp dir (shutil.disk_usage) before deciding to spill activations."""

import shutil
import tempfile

import torch
from _run import compile_run


class SpillGuard(torch.nn.Module):
    def __init__(self, d=16):
        super().__init__()
        self.lin = torch.nn.Linear(d, d)
        self.spill = False

    def forward(self, x):
        free = shutil.disk_usage(tempfile.gettempdir()).free
        self.spill = free > 100 * x.numel() * x.element_size()
        return self.lin(x)


if __name__ == "__main__":
    torch.manual_seed(0)
    compile_run(SpillGuard(), torch.randn(4, 16))
