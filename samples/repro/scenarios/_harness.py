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
    print(f"compiled run finished: {describe(out)} {digest(out)}", flush=True)
    return out


def digest(out):
    """The output's values in a few numbers, for comparing a compiled run with an eager one."""
    if isinstance(out, torch.Tensor):
        t = out.detach().double()
        return f"[sum={t.sum().item():.6g} absmax={t.abs().max().item() if t.numel() else 0:.6g}]"
    if isinstance(out, (tuple, list)):
        return "(" + ", ".join(digest(o) for o in out) + ")"
    return repr(out)
