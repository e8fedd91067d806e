"""Hot-reloadable LoRA scale: forward re-reads lora_scale.json when os.stat() says the file changed."""

import json
import os

import torch
from _run import compile_run

HERE = os.path.dirname(os.path.abspath(__file__))


class ReloadingLoRA(torch.nn.Module):
    def __init__(self, d=16, r=4, path=os.path.join(HERE, "lora_scale.json")):
        super().__init__()
        self.base = torch.nn.Linear(d, d)
        self.a = torch.nn.Linear(d, r, bias=False)
        self.b = torch.nn.Linear(r, d, bias=False)
        self.path = path
        self._mtime = None
        self.scale = 1.0

    def forward(self, x):
        mtime = os.stat(self.path).st_mtime_ns
        if mtime != self._mtime:
            with open(self.path) as fh:
                self.scale = float(json.load(fh)["scale"])
            self._mtime = mtime
        return self.base(x) + self.scale * self.b(self.a(x))


def main():
    torch.manual_seed(0)
    compile_run(ReloadingLoRA(), torch.randn(3, 16))


if __name__ == "__main__":
    main()
