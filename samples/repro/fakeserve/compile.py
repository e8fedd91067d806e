"""How fakeserve calls torch.compile.

install_torch_compiled: like SGLang's piecewise CUDA graph (sglang/srt/compilation/compile.py),
fullgraph=True, so every graph break is fatal.
torch_compile_decode: like SGLang --enable-torch-compile, no fullgraph, so breaks are tolerated.
"""

import torch


def install_torch_compiled(module: torch.nn.Module, *, fullgraph: bool = True, backend="eager", dynamic: bool = False):
    compiled = torch.compile(module.forward, fullgraph=fullgraph, dynamic=dynamic, backend=backend)
    module.forward = compiled
    return module


def set_torch_compile_config():
    import torch._dynamo.config

    # every captured batch size is its own compile; raise the limits the way SGLang does
    torch._dynamo.config.accumulated_recompile_limit = 1024
    torch._dynamo.config.recompile_limit = 1024


def torch_compile_decode(forward, *, backend="eager"):
    set_torch_compile_config()
    return torch.compile(forward, dynamic=False, backend=backend)
