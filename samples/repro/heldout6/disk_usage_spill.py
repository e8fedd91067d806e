"""KV spill to disk allowed only when shutil.disk_usage(tempdir).free is large enough (checked per forward)."""

import shutil
import tempfile

import torch
from _run import compile_run


class Spill(torch.nn.Module):
    def __init__(self, d=8):
        super().__init__()
        self.kv = torch.nn.Linear(d, d)

    def forward(self, x):
        can_spill = shutil.disk_usage(tempfile.gettempdir()).free > 1 << 20
        kv = self.kv(x)
        return kv if can_spill else kv.half().float()


def main():
    torch.manual_seed(0)
    compile_run(Spill(), torch.randn(3, 8))


if __name__ == "__main__":
    main()
