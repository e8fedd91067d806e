"""A diffusion noise schedule interpolated with np.interp at the (tensor) timesteps."""

import numpy as np
import torch
from _run import compile_run


class Noiser(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.knots_t = np.array([0.0, 250.0, 500.0, 1000.0])
        self.knots_sigma = np.array([0.01, 0.2, 0.6, 1.0])

    def forward(self, x, t):
        sigma = torch.from_numpy(np.interp(t.numpy(), self.knots_t, self.knots_sigma)).float()
        return x + sigma.view(-1, 1) * torch.ones_like(x)


def main():
    torch.manual_seed(0)
    compile_run(Noiser(), torch.randn(3, 4), torch.tensor([10.0, 400.0, 900.0]))


if __name__ == "__main__":
    main()
