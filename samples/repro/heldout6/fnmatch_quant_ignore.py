"""A quantization config whose "ignore" list holds glob patterns, matched with fnmatch against the layer's name in forward."""

import fnmatch

import torch
from _run import compile_run


class QLinear(torch.nn.Module):
    def __init__(self, name, d=8, ignore=("*.lm_head", "model.layers.0.*")):
        super().__init__()
        self.name = name
        self.fc = torch.nn.Linear(d, d)
        self.ignore = ignore

    def forward(self, x):
        w = self.fc.weight
        if not any(fnmatch.fnmatch(self.name, p) for p in self.ignore):
            scale = w.abs().amax() / 127
            w = torch.round(w / scale) * scale
        return torch.nn.functional.linear(x, w, self.fc.bias)


def main():
    torch.manual_seed(0)
    compile_run(QLinear("model.layers.1.mlp.up_proj"), torch.randn(3, 8))


if __name__ == "__main__":
    main()
