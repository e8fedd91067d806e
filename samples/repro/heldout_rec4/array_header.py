"""A response header packs the output's shape into an array.array("q") and keeps its bytes beside the result."""

import array

import torch

from _h import run

HEADERS = []


def respond(x: torch.Tensor) -> torch.Tensor:
    y = torch.relu(x) * 2
    header = array.array("q", y.shape)  # expect: array-shape
    HEADERS.append(header.tobytes())  # expect: array-bytes
    return y


def main(fullgraph):
    run(respond, torch.randn(2, 6), fullgraph=fullgraph)
