"""Which frames a person can change: the traced chain of a crash and its culprit frame."""

from __future__ import annotations

import re
import sys

from . import recache
from .records import CrashRecord, Frame

# Python's own pseudo-files. Any other `<...>` file is code a person typed: `<stdin>`, `<string>` (exec),
# `<ipython-input-3-...>`, `<console>`.
_STDLIB = recache.compile(
    r"(?:^<frozen [\w.]+>$|^<(?:built-in[^>]*|__array_function__ internals|decorator-gen-\d+)>$"
    r"|/lib/python3(?:\.\d+)?/(?!(?:site|dist)-packages/)[^/]+(?:/[^/]+)*$"
    r"|/lib64/python3(?:\.\d+)?/(?!(?:site|dist)-packages/)"
    r"|^(?:\.\.\./)?python3\.\d+/(?!(?:site|dist)-packages/))"
)
# torch's own code: a person fixing a crash does not edit these. `<eval_with_key>.N` is an fx graph's
# generated forward; `<cache dir>/xx/cxx...x.py` the module inductor generated for a graph (its compile cache).
_TORCH = recache.compile(
    r"(?:^|/)(?:(?:site|dist)-packages/torch/|pytorch/torch/|torch/_(?:dynamo|inductor|subclasses|library|ops|functorch"
    r"|higher_order_ops)/)|^(?:\.\.\./)?torch/|^<eval_with_key>|/(?P<d>[a-z0-9]{2})/c(?P=d)[a-z0-9]{40,}\.py$"
    r"|(?:^|/)torch(?:dynamo|inductor)/"  # the 2022 standalone packages
)
# torch's public library code (torch.nn, torch.distributed, ...): the culprit when no frame of the user's or
# of another package is visible. Never the compile machinery (dynamo, inductor, fx, export, the op
# registry) nor nn.Module's call wrapper, which every model's frames pass through.
_TORCH_PUBLIC = recache.compile(
    r"(?:^|/)torch/(?!_|fx/|export/|compiler/|onnx/|testing/|overrides\.py|library\.py|nn/modules/module\.py"
    r"|utils/_|autograd/function\.py)[\w/]+\.py$"
)
# Compile machinery whose frames, in a traceback, mean "dynamo called this": a frame below one of these
# was run by dynamo (a backend, a hook, a fake impl), not traced by it.
_MACHINERY = recache.compile(r"(?:^|/)torch(?:/_)?(?:dynamo|inductor)/")
_PACKAGE = recache.compile(r"(?:site|dist)-packages/(?P<pkg>[A-Za-z_][\w]*)")
# Windows keeps the standard library in `<prefix>\Lib\` with no version directory (`C:\python38\lib\
# contextlib.py`, `...\envs\x\Lib\json\encoder.py`), beside `Lib\site-packages`: a module there is stdlib
# when Python's own list of its modules names it (a project's own `lib\` folder holds other names).
_WIN_LIB = recache.compile(r"^[A-Za-z]:/(?:[^/]+/)*?[Ll]ib/(?P<mod>[A-Za-z_]\w*)(?:\.py$|/)")
_STDLIB_NAMES = frozenset(getattr(sys, "stdlib_module_names", ()))


def is_stdlib(path: str) -> bool:
    p = path.replace("\\", "/")
    if _STDLIB.search(p):
        return True
    m = _WIN_LIB.match(p)
    return m is not None and m.group("mod") in _STDLIB_NAMES


def is_torch(path: str) -> bool:
    return bool(_TORCH.search(path.replace("\\", "/")))


def is_changeable(f: Frame) -> bool:
    return not is_stdlib(f.file) and not is_torch(f.file)


def is_torch_public(path: str) -> bool:
    """torch's public library code (torch/nn/..., torch/distributed/...), not its compile machinery."""
    return bool(_TORCH_PUBLIC.search(path.replace("\\", "/")))


def is_machinery(path: str) -> bool:
    return bool(_MACHINERY.search(path.replace("\\", "/")))


def source_root(chain: tuple[Frame, ...]) -> str | None:
    """The directory that holds the packages of a chain's non-installed frames (a source checkout).

    `/work/repro/fakeserve/...` and `/work/repro/fakeinfer/...` give `/work/repro/`: the package of a
    frame is then the first directory below it. Without a second package there is no telling.
    """
    dirs = []
    for f in chain:
        p = f.file.replace("\\", "/")
        if is_changeable(f) and not _PACKAGE.search(p) and "/" in p:
            dirs.append(p.rsplit("/", 1)[0] + "/")
    if len(set(dirs)) < 2:
        return None
    common = dirs[0]
    for d in dirs[1:]:
        while not d.startswith(common):
            common = common[:-1]
            common = common[: common.rfind("/") + 1]
    return common if common.count("/") > 1 else None


def _last_install_dir(p: str) -> re.Match[str] | None:
    """The innermost `site-packages/<pkg>` (or dist-packages) of a path (a venv inside a checkout has two)."""
    m = None
    for m in _PACKAGE.finditer(p):
        pass
    return m


def package_of(path: str, root: str | None = None) -> str | None:
    """Top-level package of a frame's file: `.../site-packages/flashinfer/jit/core.py` -> `flashinfer`."""
    p = path.replace("\\", "/")
    m = _last_install_dir(p)
    if m is not None:
        return m.group("pkg")
    parts = [x for x in p.split("/") if x and x not in (".", "..", "...")]
    # Source checkouts that say where their package starts: `/sgl-workspace/sglang/python/sglang/srt/...` and
    # the src layout `/work/molpot/src/molpot/potential/nnp/pinet.py` -> the directory after `python/` or
    # `src/` (its subpackages are the same package, whatever the chain's common directory is).
    for i in range(len(parts) - 3, -1, -1):
        if parts[i] in ("python", "src"):
            return parts[i + 1]
    if root and p.startswith(root) and "/" in p[len(root) :]:
        return p[len(root) :].split("/", 1)[0]
    return parts[-2] if len(parts) >= 2 else None


def module_of(path: str, root: str | None = None) -> str | None:
    """Dotted module for a file under site-packages (or a source checkout's package dir)."""
    p = path.replace("\\", "/")
    if not p.endswith(".py"):
        return None
    m = _last_install_dir(p)
    if m is not None:
        rel = p[m.start("pkg") :]
    elif root and p.startswith(root):
        rel = p[len(root) :]
    else:
        pkg = package_of(p)
        if not pkg or f"/{pkg}/" not in p:
            return None
        rel = p[p.rindex(f"/{pkg}/") + 1 :]
    rel = rel[:-3]
    rel = rel.removesuffix("/__init__")
    return rel.replace("/", ".")


def traced_chain(record: CrashRecord) -> tuple[Frame, ...]:
    """The frames dynamo was tracing (or that it called), outermost first.

    The `from user code:` block when there is one. Else the frames that torch's compile machinery
    called (a custom backend, a third-party hook, a fake implementation) when such a frame raised. Else
    the traceback frames of the headline, but only when they are not a report of dynamo's own (a
    traceback of dynamo's internals says nothing about the user's code).
    """
    if record.dynamo is not None and record.dynamo.user_frames:
        return record.dynamo.user_frames
    if record.kind == "graph_break":
        return ()
    called = called_by_machinery(record)
    if called:
        return called
    if record.dynamo is not None:
        return _raised_in_view(record)
    for block in reversed(record.chain):
        if block.frames:
            return block.frames
    return ()


# `'NoneType' object has no attribute 'shape'`: the attribute an AttributeError (or dynamo's wrapper of one) names
_NO_ATTRIBUTE = recache.compile(r"has no attribute '(?P<attr>\w+)'")


def _raised_in_view(record: CrashRecord) -> tuple[Frame, ...]:
    """A dynamo exception's traceback without dynamo's frames (cut, or stripped) is the user's call of the compiled
    function, except where its innermost frame is the line that raised: an attribute error whose attribute that
    frame's source line reads (`x = emb.shape` under `'NoneType' object has no attribute 'shape'`)."""
    h = record.headline
    if h is None or not h.frames or any(is_machinery(f.file) for b in record.chain for f in b.frames):
        return ()
    m = _NO_ATTRIBUTE.search(h.message or "")
    inner = h.frames[-1]
    if m is None or not is_changeable(inner) or f".{m.group('attr')}" not in (inner.source or ""):
        return ()
    return h.frames


def called_by_machinery(record: CrashRecord) -> tuple[Frame, ...]:
    """The frames below torch's compile machinery in a traceback, when one of them is not torch's.

    A backend's `__call__`, a package's hook or a fake implementation that raised sits below dynamo's or
    inductor's frames; the frames above those are only the user's call of the compiled function.
    """
    for block in reversed(record.chain):
        frames = block.frames
        first = next((i for i, f in enumerate(frames) if is_machinery(f.file)), None)
        if first is None:
            if block.type.endswith("BackendCompilerFailed") and any(is_changeable(f) for f in frames):
                return frames  # torch 2.1 prints only the backend's own frames under "raised:"
            continue
        tail = frames[first + 1 :]
        below = [i for i, f in enumerate(tail) if not is_torch(f.file)]
        if any(is_changeable(tail[i]) for i in below):
            # from the last machinery frame on: the frames the machinery called, and what they called
            last = max((i for i, f in enumerate(tail) if is_machinery(f.file)), default=-1)
            rest = tail[last + 1 :]
            if any(is_changeable(f) for f in rest):
                return rest
            return tail
    return ()


def pick_culprit(chain: tuple[Frame, ...]) -> Frame | None:
    """The deepest frame that is neither the standard library nor torch; when there is none, the deepest
    frame of torch's public library code (torch.nn, torch.distributed), never its compile machinery."""
    for f in reversed(chain):
        if is_changeable(f):
            return f
    for f in reversed(chain):
        if is_torch_public(f.file):
            return f
    return None


def entry_of(chain: tuple[Frame, ...], culprit: Frame | None) -> tuple[Frame | None, Frame | None]:
    """The outermost frame of the culprit's package in the chain, and the frame that calls it.

    Wrapping that entry function (as an opaque custom op) removes every blocker below it at once.
    """
    if culprit is None:
        return None, None
    root = source_root(chain)
    pkg = package_of(culprit.file, root)
    idx = None
    for i, f in enumerate(chain):
        if f is culprit or (f.file == culprit.file and f.line == culprit.line):
            idx = i
            break
    if idx is None:
        return culprit, None
    start = idx
    while start > 0:
        prev = chain[start - 1]
        if is_changeable(prev) and package_of(prev.file, root) == pkg:
            start -= 1
        elif not is_changeable(prev):
            # stdlib / polyfill frames between two frames of the same package (functools.cache wrappers)
            j = start - 1
            while j >= 0 and not is_changeable(chain[j]):
                j -= 1
            if j >= 0 and package_of(chain[j].file, root) == pkg:
                start = j
            else:
                break
        else:
            break
    caller = None
    for j in range(start - 1, -1, -1):
        if is_changeable(chain[j]):
            caller = chain[j]
            break
    return chain[start], caller


def owner_of(culprit: Frame | None, caller: Frame | None) -> str:
    """Who can change the culprit's code: "third-party" for a package other than the calling frame's (the
    user would be editing someone else's release), "torch", "user", or "unknown".

    `caller` is `entry_of`'s: the changeable frame that calls into the culprit's package from outside it.
    An installed package is third-party unless a checkout of that same package calls it. A source checkout
    is third-party when the user's code calls into it from another top-level package (a library installed
    with `pip install -e`, or cloned beside the code that uses it); with no such caller it is the user's.
    """
    if culprit is None:
        return "unknown"
    if is_torch(culprit.file):
        return "torch"
    p = culprit.file.replace("\\", "/")
    if is_stdlib(p):
        return "user"
    m = _last_install_dir(p)
    if m is None:
        # A `<module>` frame is never traced (dynamo compiles functions): it is the program's own script, shown
        # above the compiled region (2.9+ graph-break logs print the whole stack), not a library's user.
        if caller is not None and _last_install_dir(caller.file.replace("\\", "/")) is None \
                and caller.function != "<module>":
            return "third-party"
        return "user"
    if caller is not None and _last_install_dir(caller.file.replace("\\", "/")) is None \
            and package_of(caller.file) == m.group("pkg"):
        return "user"  # a checkout of the same package calls it: its developer is the one reading the log
    return "third-party"  # an installed release: whoever runs it did not write it, even when it calls itself
