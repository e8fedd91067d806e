"""An error reporter that fetches the caller's source line with linecache (a skipped stdlib module)."""

import linecache

import torch

from ._harness import compile_and_run


def debug_context() -> str:
    return linecache.getline(__file__, 1).strip()  # expect: skipped-function


def checked_add(x: torch.Tensor, y: torch.Tensor) -> torch.Tensor:
    ctx = debug_context()
    return x + y * len(ctx)


def main(fullgraph: bool) -> None:
    compile_and_run(checked_add, torch.randn(4), torch.randn(4), fullgraph=fullgraph)
