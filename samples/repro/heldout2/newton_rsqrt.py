"""An iterative normaliser: Newton steps for 1/sqrt(v) until the update is below a tolerance (.item() in a while)."""

import torch
from _run import compile_run


class NewtonNorm(torch.nn.Module):
    def forward(self, x, tol=1e-6):
        v = x.pow(2).mean(-1, keepdim=True) + 1e-5
        r = torch.ones_like(v)
        for _ in range(50):
            nxt = r * (1.5 - 0.5 * v * r * r)
            if (nxt - r).abs().max().item() < tol:
                r = nxt
                break
            r = nxt
        return x * r


if __name__ == "__main__":
    torch.manual_seed(0)
    compile_run(NewtonNorm(), torch.rand(4, 16) * 0.5 + 0.75)
