"""Not a failure: a clean fullgraph compile of a batch dimension marked dynamic, under TORCH_LOGS=dynamic (prints the
symbols created and the guards added), run on two batch sizes."""

import torch
import torch._dynamo

from _h import show


def pool(x: torch.Tensor) -> torch.Tensor:
    return torch.nn.functional.avg_pool1d(x.unsqueeze(1), 2).squeeze(1) * x.shape[0]


def main(fullgraph):
    f = torch.compile(pool, backend="eager", fullgraph=fullgraph)
    for b in (3, 5):
        x = torch.randn(b, 8)
        torch._dynamo.mark_dynamic(x, 0)
        out = f(x)
    print(f"compiled run done: {show(out)}", flush=True)
