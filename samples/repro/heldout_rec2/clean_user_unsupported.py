"""Not a dynamo failure: after a clean compile the server's own option check rejects a combination and
raises NotImplementedError with compile-looking words in its message."""

import torch

from _h import run


def check_options(opts: dict) -> None:
    if opts.get("kv_cache_dtype") == "fp8" and opts.get("fullgraph"):
        raise NotImplementedError(  # expect: user-option-check
            "kv_cache_dtype=fp8 is unsupported with torch.compile fullgraph=True in this server build; "
            "use kv_cache_dtype=auto")


def decode(x: torch.Tensor) -> torch.Tensor:
    return x.softmax(-1)


def main(fullgraph):
    run(decode, torch.randn(2, 5), fullgraph=fullgraph)
    check_options({"kv_cache_dtype": "fp8", "fullgraph": True})
