"""Top-1 mixture-of-experts routing: each expert runs on the tokens routed to it (nonzero per expert)."""

import torch
from _run import compile_run


class MoE(torch.nn.Module):
    def __init__(self, d=16, experts=4):
        super().__init__()
        self.gate = torch.nn.Linear(d, experts)
        self.experts = torch.nn.ModuleList(torch.nn.Linear(d, d) for _ in range(experts))

    def forward(self, x):
        choice = self.gate(x).argmax(dim=-1)
        out = torch.zeros_like(x)
        for i, expert in enumerate(self.experts):
            idx = (choice == i).nonzero(as_tuple=True)[0]
            out[idx] = expert(x[idx])
        return out


if __name__ == "__main__":
    torch.manual_seed(0)
    compile_run(MoE(), torch.randn(12, 16))
