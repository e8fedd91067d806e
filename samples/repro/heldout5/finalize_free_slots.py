"""KV slots returned to a free list with weakref.finalize(request, ...) registered in forward."""

import weakref

import torch
from _run import compile_run


class Request:
    def __init__(self, rid):
        self.rid = rid


class SlotWriter(torch.nn.Module):
    def __init__(self, d=16, slots=8):
        super().__init__()
        self.proj = torch.nn.Linear(d, d)
        self.register_buffer("cache", torch.zeros(slots, d))
        self.free = list(range(slots))

    def _release(self, slot):
        self.free.append(slot)

    def forward(self, x, req: Request):
        slot = self.free.pop(0)
        weakref.finalize(req, self._release, slot)
        self.cache[slot] = self.proj(x).mean(0)
        return self.cache.clone()


def main():
    torch.manual_seed(0)
    req = Request(7)
    compile_run(SlotWriter(), torch.randn(3, 16), req)


if __name__ == "__main__":
    main()
