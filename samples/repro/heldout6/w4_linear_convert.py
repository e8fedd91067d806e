"""nn.Linear layers of a block converted to w4kit.nn.W4Linear (a method on a module: its forward calls the kernel)."""

import torch
from _run import compile_run

import w4kit


def convert(module: torch.nn.Module) -> torch.nn.Module:
    for name, child in module.named_children():
        if isinstance(child, torch.nn.Linear):
            setattr(module, name, w4kit.nn.W4Linear.from_linear(child))
        else:
            convert(child)
    return module


class Block(torch.nn.Module):
    def __init__(self, d=64):
        super().__init__()
        self.norm = torch.nn.LayerNorm(d)
        self.ffn = torch.nn.Sequential(torch.nn.Linear(d, 128), torch.nn.GELU(), torch.nn.Linear(128, d))

    def forward(self, x):
        return x + self.ffn(self.norm(x))


def main():
    torch.manual_seed(0)
    compile_run(convert(Block()), torch.randn(3, 64))


if __name__ == "__main__":
    main()
