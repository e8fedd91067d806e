"""forward hands its activations' norm to a telemetry writer thread through a queue.Queue."""

import queue

import torch

from _h import run

TELEMETRY: "queue.Queue[torch.Tensor]" = queue.Queue(maxsize=64)


def step(x: torch.Tensor) -> torch.Tensor:
    h = torch.tanh(x)
    TELEMETRY.put_nowait(h.norm().detach())  # expect: queue-put
    return h * 0.5


def main(fullgraph):
    run(step, torch.randn(4, 4), fullgraph=fullgraph)
