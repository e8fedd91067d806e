"""An RMS-scale op registered the old way (torch.library.Library DEF + a CPU impl), with no Meta/fake kernel."""

import torch
from _run import compile_run

_lib = torch.library.Library("heldout5", "DEF")
_lib.define("rms_scale(Tensor x, float eps) -> Tensor")


def _rms_scale_cpu(x, eps):
    return x * torch.rsqrt(x.pow(2).mean(-1, keepdim=True) + eps)


_lib.impl("rms_scale", _rms_scale_cpu, "CPU")


class Norm(torch.nn.Module):
    def __init__(self, d=32):
        super().__init__()
        self.weight = torch.nn.Parameter(torch.linspace(0.5, 1.5, d))

    def forward(self, x):
        return torch.ops.heldout5.rms_scale(x, 1e-6) * self.weight


def main():
    torch.manual_seed(0)
    compile_run(Norm(), torch.randn(3, 32))


if __name__ == "__main__":
    main()
