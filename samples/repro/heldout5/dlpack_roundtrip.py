"""Hidden states handed to another framework and back through DLPack (torch.utils.dlpack.to_dlpack / from_dlpack)."""

import torch
import torch.utils.dlpack
from _run import compile_run


class Bridge(torch.nn.Module):
    def __init__(self, d=16):
        super().__init__()
        self.pre = torch.nn.Linear(d, d)
        self.post = torch.nn.Linear(d, d)

    def forward(self, x):
        h = self.pre(x)
        capsule = torch.utils.dlpack.to_dlpack(h.contiguous())
        h2 = torch.utils.dlpack.from_dlpack(capsule)      # stands in for the external kernel's output
        return self.post(h2 * 2.0)


def main():
    torch.manual_seed(0)
    compile_run(Bridge(), torch.randn(3, 16))


if __name__ == "__main__":
    main()
