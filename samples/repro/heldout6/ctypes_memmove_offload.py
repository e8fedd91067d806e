"""A host KV offload written as a user 'kernel': ctypes.memmove of the tensor's bytes into a preallocated buffer."""

import ctypes

import torch
from _run import compile_run


class Offload(torch.nn.Module):
    def __init__(self, d=16, slots=8):
        super().__init__()
        self.kv = torch.nn.Linear(d, d)
        self.register_buffer("host", torch.zeros(slots, d))

    def forward(self, x):
        kv = self.kv(x).detach().contiguous()
        ctypes.memmove(self.host.data_ptr(), kv.data_ptr(), kv.numel() * kv.element_size())
        return self.host[: x.shape[0]] * 2.0


def main():
    torch.manual_seed(0)
    compile_run(Offload(), torch.randn(3, 16))


if __name__ == "__main__":
    main()
