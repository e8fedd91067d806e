"""Per-request reproducible noise: torch.random.fork_rng() + torch.manual_seed(request seed) inside forward."""

import torch
from _run import compile_run


class NoisyEmbed(torch.nn.Module):
    def __init__(self, d=16):
        super().__init__()
        self.proj = torch.nn.Linear(d, d)

    def forward(self, x, seed: int):
        with torch.random.fork_rng(devices=[]):
            torch.manual_seed(seed)
            noise = torch.randn(x.shape) * 0.01
        return self.proj(x + noise)


def main():
    torch.manual_seed(0)
    compile_run(NoisyEmbed(), torch.randn(3, 16), 1234)


if __name__ == "__main__":
    main()
