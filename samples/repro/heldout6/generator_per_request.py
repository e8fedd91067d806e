"""Per-request seeded sampling noise: a torch.Generator made and seeded in forward, passed to torch.rand."""

import torch
from _run import compile_run


class Sampler(torch.nn.Module):
    def __init__(self, d=8, vocab=10):
        super().__init__()
        self.head = torch.nn.Linear(d, vocab)

    def forward(self, h, seed: int):
        g = torch.Generator().manual_seed(seed)
        u = torch.rand(h.shape[0], self.head.out_features, generator=g)
        gumbel = -torch.log(-torch.log(u.clamp_min(1e-9)))
        noisy = self.head(h) + gumbel
        return noisy.argmax(-1).float(), torch.softmax(noisy, -1).amax(-1)


def main():
    torch.manual_seed(0)
    compile_run(Sampler(), torch.randn(2, 8), 42)


if __name__ == "__main__":
    main()
