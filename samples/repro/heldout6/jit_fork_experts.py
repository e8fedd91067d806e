"""Two expert branches run with torch.jit.fork / torch.jit.wait (inter-op parallelism from TorchScript days)."""

import torch
from _run import compile_run


class TwoExperts(torch.nn.Module):
    def __init__(self, d=8):
        super().__init__()
        self.a = torch.nn.Linear(d, d)
        self.b = torch.nn.Linear(d, d)

    def forward(self, x):
        fa = torch.jit.fork(self.a, x)
        fb = torch.jit.fork(self.b, x)
        return torch.jit.wait(fa) + torch.jit.wait(fb)


def main():
    torch.manual_seed(0)
    compile_run(TwoExperts(), torch.randn(3, 8))


if __name__ == "__main__":
    main()
