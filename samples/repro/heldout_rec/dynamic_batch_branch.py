"""A batch dimension marked dynamic, then specialised by a branch on its value."""

import torch
import torch._dynamo

from _h import show


def pad_to_eight(x: torch.Tensor) -> torch.Tensor:
    if x.shape[0] == 8:  # expect: specialise
        return x * 2
    return torch.nn.functional.pad(x, (0, 0, 0, 8 - x.shape[0]))


def main(fullgraph):
    x = torch.randn(8, 4)
    torch._dynamo.mark_dynamic(x, 0)
    out = torch.compile(pad_to_eight, backend="eager", fullgraph=fullgraph)(x)
    print(f"compiled run done: {show(out)}", flush=True)
