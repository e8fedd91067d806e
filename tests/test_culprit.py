"""The culprit: which frame a person changes, for the frames a log shows (real recordings in samples/)."""

from __future__ import annotations

import re

import pytest

from conftest import SAMPLES
from crashlens.cli.scan import run_scan
from crashlens.culprit import entry_of, is_changeable, is_stdlib, owner_of, pick_culprit
from crashlens.records import Frame


def _marker_line(rel: str, marker: str) -> int:
    src = (SAMPLES / "repro" / rel).read_text().splitlines()
    return next(i for i, ln in enumerate(src, 1) if re.search(rf"#\s*expect:\s*{re.escape(marker)}\b", ln))


@pytest.mark.parametrize("path", ["<stdin>", "<string>", "<ipython-input-3-6f1e0c2a>", "<console>",
                                  "/tmp/ipykernel_4120/2771912475.py"])
def test_typed_in_code_is_user_code(path):
    assert not is_stdlib(path)
    assert is_changeable(Frame(path, 4, "f"))


@pytest.mark.parametrize("path", ["<frozen os>", "<frozen importlib._bootstrap>",
                                  "/usr/lib/python3.10/subprocess.py"])
def test_python_itself_is_not(path):
    assert is_stdlib(path)


def test_torch_public_code_is_the_culprit_only_when_nothing_else_is_visible():
    sp = "/opt/venv/lib/python3.11/site-packages/torch"
    dyn = Frame(f"{sp}/_dynamo/polyfills/__init__.py", 10, "getattr_and_trace")
    mod = Frame(f"{sp}/nn/modules/module.py", 1751, "_call_impl")
    flex = Frame(f"{sp}/nn/attention/flex_attention.py", 1300, "flex_attention")
    dist = Frame(f"{sp}/distributed/distributed_c10d.py", 2500, "all_reduce")
    assert pick_culprit((mod, flex, dyn)) == flex
    assert pick_culprit((mod, dist)) == dist
    assert pick_culprit((mod, dyn)) is None  # dynamo and nn.Module's call wrapper never
    user = Frame("/srv/app/model.py", 12, "forward")
    assert pick_culprit((user, mod, flex)) == user


def _diags(name: str):
    return run_scan((str(SAMPLES / name),), (), audit=False).diagnoses


def test_custom_backend_failure_names_the_backend_frame():
    (d,) = [d for d in _diags("raw/backend-failed.log") if d.family == "dynamo"]
    assert d.culprit is not None
    assert d.culprit.file.endswith("scenarios/backend_failed.py")
    assert d.culprit.line == _marker_line("scenarios/backend_failed.py", "backend")


@pytest.mark.parametrize("name", ["raw/recompile-limit.log", "raw/recompile-limit-nofullgraph.log"])
def test_recompile_limit_takes_the_culprit_from_the_guard_user_stack(name):
    diags = [d for d in _diags(name) if d.signature == "recompile-limit"]
    assert diags
    want = _marker_line("scenarios/recompile_limit.py", "recompile")
    for d in diags:  # the fatal FailOnRecompileLimitHit too, whose own record names no frame
        assert d.culprit is not None and d.culprit.file.endswith("scenarios/recompile_limit.py")
        assert d.culprit.line == want


SP = "/venv/lib/python3.11/site-packages"


@pytest.mark.parametrize(("chain", "owner"), [
    # an installed release called from the user's script
    (("/srv/app/serve.py", f"{SP}/flashinfer/jit/core.py"), "third-party"),
    # a checkout beside the user's code (`pip install -e`, or cloned next to it), called from another package
    (("/work/app/scenarios/run.py", "/work/app/fakeinfer/sampling.py"), "third-party"),
    (("/sgl-workspace/sglang/python/sglang/srt/layers/q.py", "/sgl-workspace/flashinfer/flashinfer/fp4.py"),
     "third-party"),
    # the user's own package, one file calling another
    (("/work/app/scenarios/run.py", "/work/app/scenarios/helpers.py"), "user"),
    # the user's file alone
    (("/work/app/model.py",), "user"),
])
def test_who_owns_the_culprit(chain, owner):
    frames = tuple(Frame(f, 10 + i, f"f{i}") for i, f in enumerate(chain))
    culprit = pick_culprit(frames)
    _entry, caller = entry_of(frames, culprit)
    assert owner_of(culprit, caller) == owner
