"""Not a dynamo failure: compilation succeeds, then the compiled code fails at run time on real values.

Fake tensors do not look at values, so an out-of-range index passes tracing; the IndexError comes from
running the compiled function, with torch/_dynamo frames in the traceback. crashlens must not call it a
dynamo failure."""

import torch

from ._harness import compile_and_run


def gather_rows(table: torch.Tensor, ids: torch.Tensor) -> torch.Tensor:
    return torch.index_select(table, 0, ids) * 2  # expect: runtime-index


def main(fullgraph: bool = True) -> None:
    compile_and_run(gather_rows, torch.randn(8, 4), torch.tensor([1, 9]), fullgraph=fullgraph)
