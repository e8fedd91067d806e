"""A generation loop checks a threading.Event (set by the server on shutdown) between decode steps."""

import threading

import torch

from _h import run

STOP = threading.Event()


def decode(x: torch.Tensor) -> torch.Tensor:
    for _ in range(3):
        if STOP.is_set():  # expect: event-is-set
            break
        x = torch.softmax(x, dim=-1) + x
    return x


def main(fullgraph):
    run(decode, torch.randn(2, 5), fullgraph=fullgraph)
