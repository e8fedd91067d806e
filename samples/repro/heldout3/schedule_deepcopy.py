"""A layer that copy.deepcopy's a nested schedule (lists of dicts) each call, then pops entries off the copy."""

import copy

import torch
from _run import compile_run

SCHEDULE = {"stages": [{"scale": 0.5, "shift": 0.1}, {"scale": 2.0, "shift": -0.2}]}


class StagedAffine(torch.nn.Module):
    def forward(self, x):
        sched = copy.deepcopy(SCHEDULE)
        while sched["stages"]:
            st = sched["stages"].pop(0)
            x = x * st["scale"] + st["shift"]
        return x


if __name__ == "__main__":
    torch.manual_seed(0)
    compile_run(StagedAffine(), torch.randn(4, 16))
