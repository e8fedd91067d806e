"""A wrapper that registers a forward hook on its sublayer inside forward (to clamp the output), once."""

import torch
from _run import compile_run


class HookedWrapper(torch.nn.Module):
    def __init__(self, d=16):
        super().__init__()
        self.inner = torch.nn.Linear(d, d)
        self.handle = None

    def forward(self, x):
        if self.handle is None:
            self.handle = self.inner.register_forward_hook(lambda mod, inp, out: out.clamp(-0.5, 0.5))
        return self.inner(x)


if __name__ == "__main__":
    torch.manual_seed(0)
    compile_run(HookedWrapper(), torch.randn(4, 16))
