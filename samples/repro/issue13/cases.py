"""Small reproducers for issue 13 (culprit, ranking, routing, false alarms). Run: python cases.py CASE."""
import os
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "site-packages"))

import torch  # noqa: E402

import fakepkg  # noqa: E402


def compile_run(fn, *args, fullgraph=True):
    return torch.compile(fn, fullgraph=fullgraph, backend="eager")(*args)


def tp_quantize(x):
    return fakepkg.quantize(x) + 1  # frame: tp-call


def tp_flag(x):
    if fakepkg.has_fast_path():  # frame: tp-flag-call
        return x * 2
    return x


def tp_lock(x):
    return fakepkg.scaled(x) + 1


class ParamInForward(torch.nn.Module):
    def forward(self, x):
        w = torch.nn.Parameter(torch.ones(x.shape[-1]))  # expect: param-in-forward
        return x * w


def bincount(x):
    return torch.bincount(x)  # expect: bincount


def nonzero(x):
    return torch.nonzero(x)  # expect: nonzero


def device_mismatch(x):
    return x @ torch.ones(4, 4, device="meta")  # expect: device-mismatch


def shape_mismatch(x):
    return x @ torch.ones(3, 3)  # expect: shape-mismatch


def next_no_default(x):
    it = iter([])
    first = next(it)  # expect: next-no-default
    return x + first


def zip_strict(x):
    total = x
    for a, b in zip([1, 2], [1, 2, 3], strict=True):  # expect: zip-strict
        total = total + a * b
    return total


def no_cuda(x):
    return x.cuda() + 1  # expect: no-cuda


def environ_read(x):
    if os.environ["CASES_SCALE"] == "2":  # expect: environ-read
        return x * 2
    return x


def per_call_hash(x):
    import hashlib

    digest = hashlib.sha256(x.numpy().tobytes()).hexdigest()  # expect: per-call-hash
    return x + len(digest)


def failing_backend(gm, example_inputs):
    raise RuntimeError("backend refuses this graph")  # expect: suppressed-backend


def suppressed_backend(x):
    torch._dynamo.config.suppress_errors = True
    return torch.compile(tp_quantize_free, backend=failing_backend)(x)


def tp_quantize_free(x):
    return x.sin() + 1


def eager_cuda(x):
    torch.cuda.current_device()  # expect: eager-cuda
    return x


if hasattr(torch.library, "custom_op"):  # torch 2.4 or later: the fake-impl cases' ops, defined at import

    @torch.library.custom_op("issue13::scaled_norm", mutates_args=())
    def scaled_norm(x: torch.Tensor, eps: float = 1e-6) -> torch.Tensor:
        return x / (x.abs().max() + eps)

    @scaled_norm.register_fake
    def scaled_norm_fake(x, eps):  # expect: fake-signature (the op's default for eps left out)
        return torch.empty_like(x)

    @torch.library.custom_op("issue13::weight_clone", mutates_args=())
    def weight_clone(weight: torch.Tensor) -> torch.Tensor:
        return weight.clone()

    @weight_clone.register_fake
    def weight_clone_fake(weight):
        return torch.empty_like(weight)


def fake_signature(x):
    return scaled_norm(x) + 1


class WeightParameter(torch.nn.Parameter):
    """A Parameter subclass, as vLLM's weight classes are (pytorch#174274)."""


def fake_dispatch(x):
    from torch._subclasses.fake_tensor import FakeTensorMode

    weight = WeightParameter(torch.randn(4, 4))
    with FakeTensorMode():
        return torch.ops.issue13.weight_clone(weight)  # expect: fake-dispatch


def broken_cxx(x):
    import torch._inductor.config

    # a compiler that exists and answers --version, but fails on every build (no Python headers)
    here = os.path.dirname(os.path.abspath(__file__))
    torch._inductor.config.cpp.cxx = (os.path.join(here, "broken_cxx.py"),)
    return torch.compile(toolchain_layer, backend="inductor")(x)


def toolchain_layer(x):
    return torch.sin(x) + 1


CASES = {
    "tp-quantize": lambda: compile_run(tp_quantize, torch.randn(4)),
    "tp-flag": lambda: compile_run(tp_flag, torch.randn(4)),
    "tp-lock": lambda: compile_run(tp_lock, torch.randn(4)),
    "param-in-forward": lambda: compile_run(ParamInForward(), torch.randn(2, 4)),
    "bincount": lambda: compile_run(bincount, torch.tensor([1, 2, 2])),
    "nonzero": lambda: compile_run(nonzero, torch.tensor([0, 1, 1])),
    "device-mismatch": lambda: compile_run(device_mismatch, torch.randn(2, 4)),
    "shape-mismatch": lambda: compile_run(shape_mismatch, torch.randn(2, 4)),
    "next-no-default": lambda: compile_run(next_no_default, torch.randn(4)),
    "zip-strict": lambda: compile_run(zip_strict, torch.randn(4)),
    "no-cuda": lambda: compile_run(no_cuda, torch.randn(4)),
    "environ-read": lambda: compile_run(environ_read, torch.randn(4)),
    "suppressed": lambda: compile_run(tp_quantize, torch.randn(4), fullgraph=False),
    "per-call-hash": lambda: compile_run(per_call_hash, torch.randn(4)),
    "suppressed-backend": lambda: suppressed_backend(torch.randn(4)),
    "eager-cuda": lambda: eager_cuda(torch.randn(4)),
    "fake-signature": lambda: compile_run(fake_signature, torch.randn(4)),
    "fake-dispatch": lambda: fake_dispatch(torch.randn(4)),
    "broken-cxx": lambda: broken_cxx(torch.randn(8)),
}

if __name__ == "__main__":
    if sys.argv[1] == "suppressed":
        import torch._dynamo

        torch._dynamo.config.suppress_errors = True
    os.environ.setdefault("CASES_SCALE", "2")
    out = CASES[sys.argv[1]]()
    print("finished:", type(out).__name__)
