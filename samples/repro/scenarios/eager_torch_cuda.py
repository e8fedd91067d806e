"""Not a dynamo failure: eager start-up code that asks torch.cuda for a device on a machine without one.

No torch.compile is involved; the traceback only passes through torch.cuda (a negative for the corpus)."""

import torch


def pick_device() -> torch.device:
    index = torch.cuda.current_device()  # expect: eager-cuda
    return torch.device("cuda", index)


def main(fullgraph: bool) -> None:
    device = pick_device()
    print(f"using {device}", flush=True)
