"""A prefix-cache layer keyed by uuid.uuid5 of the system prompt (a stable id for the cached prefix state)."""

import uuid

import torch
from _run import compile_run

NS = uuid.UUID("6ba7b811-9dad-11d1-80b4-00c04fd430c8")


class PrefixCached(torch.nn.Module):
    def __init__(self, d=16, system_prompt="You are a helpful assistant."):
        super().__init__()
        self.proj = torch.nn.Linear(d, d)
        self.system_prompt = system_prompt
        self.prefix_state: dict[str, torch.Tensor] = {}

    def forward(self, x):
        key = str(uuid.uuid5(NS, self.system_prompt))
        state = self.prefix_state.get(key)
        if state is None:
            state = torch.zeros(x.shape[-1])
        y = self.proj(x) + state
        self.prefix_state[key] = y.mean(0).detach()
        return y


if __name__ == "__main__":
    torch.manual_seed(0)
    compile_run(PrefixCached(), torch.randn(4, 16))
