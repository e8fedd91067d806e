"""A norm whose eps and output scale are read from an INI file (configparser) in forward."""

import configparser
import os

import torch
from _run import compile_run

CONFIG = os.path.join(os.path.dirname(os.path.abspath(__file__)), "ini_config.ini")


def norm_settings(path: str) -> tuple:
    cp = configparser.ConfigParser()
    cp.read(path)
    return cp.getfloat("norm", "eps"), cp.getfloat("norm", "scale")


class ConfiguredNorm(torch.nn.Module):
    def __init__(self, d=16):
        super().__init__()
        self.weight = torch.nn.Parameter(torch.ones(d))

    def forward(self, x):
        eps, scale = norm_settings(CONFIG)
        return scale * self.weight * x * torch.rsqrt(x.pow(2).mean(-1, keepdim=True) + eps)


if __name__ == "__main__":
    torch.manual_seed(0)
    compile_run(ConfiguredNorm(), torch.randn(4, 16))
