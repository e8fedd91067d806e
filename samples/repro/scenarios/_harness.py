import torch


def describe(out):
    if isinstance(out, torch.Tensor):
        return f"Tensor{tuple(out.shape)} {out.dtype}"
    if isinstance(out, (tuple, list)):
        return "(" + ", ".join(describe(o) for o in out) + ")"
    return repr(out)


def compile_and_run(fn, *args, fullgraph: bool = True, backend="eager", **compile_kwargs):
    compiled = torch.compile(fn, backend=backend, fullgraph=fullgraph, **compile_kwargs)
    out = compiled(*args)
    print(f"compiled run finished: {describe(out)}", flush=True)
    return out
