"""JIT specs, their registry, build and load (mimics flashinfer/jit/core.py)."""

import dataclasses
import logging
import os
import subprocess
import sys
from datetime import datetime
from pathlib import Path
from typing import Dict, List, Optional, Sequence, Union

from . import env as jit_env
from . import ffi
from .filelock import FileLock

_LOG_FORMAT = "%(asctime)s - %(levelname)s - %(filename)s:%(lineno)d - fakeinfer.jit: %(message)s"


class FakeInferJITLogger(logging.Logger):
    def __init__(self, name):
        super().__init__(name)
        self.setLevel(os.getenv("FAKEINFER_LOGGING_LEVEL", "info").upper())
        handler = logging.StreamHandler()
        handler.setFormatter(logging.Formatter(_LOG_FORMAT))
        self.addHandler(handler)


logger = FakeInferJITLogger("fakeinfer.jit")

common_nvcc_flags = ["-DFLASHINFER_ENABLE_FP8_E8M0", "-DFLASHINFER_ENABLE_FP4_E2M1"]


@dataclasses.dataclass
class JitSpec:
    name: str
    sources: List[Path]
    extra_cflags: Optional[List[str]]
    extra_cuda_cflags: Optional[List[str]]
    extra_ldflags: Optional[List[str]]
    extra_include_dirs: Optional[List[Path]]
    needs_device_linking: bool = False
    created_at: Optional[datetime] = None

    @property
    def ninja_path(self) -> Path:
        return jit_env.FAKEINFER_JIT_DIR / self.name / "build.ninja"

    @property
    def jit_library_path(self) -> Path:
        return jit_env.FAKEINFER_JIT_DIR / self.name / f"{self.name}.so"

    @property
    def aot_path(self) -> Path:
        return jit_env.FAKEINFER_AOT_DIR / self.name / f"{self.name}.so"

    @property
    def is_aot(self) -> bool:
        return self.aot_path.exists()  # expect: stat

    @property
    def is_compiled(self) -> bool:
        return self.jit_library_path.exists()  # expect: stat-compiled

    @property
    def lock_path(self) -> Path:
        return get_tmpdir() / f"{self.name}.lock"

    def get_library_path(self) -> Path:
        if self.is_aot:
            return self.aot_path
        return self.jit_library_path

    def write_ninja(self) -> None:
        self.ninja_path.parent.mkdir(parents=True, exist_ok=True)
        lines = [
            "ninja_required_version = 1.3",
            f"cflags = {' '.join(self.extra_cflags or [])}",
            f"cuda_cflags = {' '.join(self.extra_cuda_cflags or [])}",
            f"ldflags = {' '.join(self.extra_ldflags or [])}",
        ]
        lines += [f"build {Path(src).stem}.cuda.o: cuda_compile {src}" for src in self.sources]
        lines.append(f"build {self.name}.so: link " + " ".join(f"{Path(s).stem}.cuda.o" for s in self.sources))
        content = "\n".join(lines) + "\n"
        if not self.ninja_path.exists() or self.ninja_path.read_text() != content:
            self.ninja_path.write_text(content)

    def build(self, verbose: bool, need_lock: bool = True) -> None:
        lock = FileLock(self.lock_path, thread_local=False) if need_lock else _NullLock()
        with lock:
            self.write_ninja()
            run_ninja(jit_env.FAKEINFER_JIT_DIR / self.name, self.jit_library_path, verbose)

    def load(self, so_path: Path):
        return ffi.load_module(str(so_path))  # frame: ffi-load

    def build_and_load(self):
        if self.is_aot:  # frame: is-aot
            return self.load(self.aot_path)

        # Guard both build and load with the same lock, so that another process building the
        # same op cannot remove the .so between our build and our load.
        with FileLock(self.lock_path, thread_local=False):  # frame: filelock
            so_path = self.jit_library_path
            if not self.is_compiled:  # frame: is-compiled
                verbose = os.environ.get("FAKEINFER_JIT_VERBOSE", "0") == "1"
                self.build(verbose, need_lock=False)
            logger.info(f"Loading JIT ops: {self.name}")  # expect: logging
            return self.load(so_path)  # frame: load


class _NullLock:
    def __enter__(self):
        return self

    def __exit__(self, *exc):
        return False


class JitSpecRegistry:
    """Remembers every spec generated in this process, and when, for `fakeinfer show-config`."""

    def __init__(self) -> None:
        self._specs: Dict[str, JitSpec] = {}

    def register(self, spec: JitSpec) -> None:
        spec.created_at = datetime.now()  # expect: datetime
        self._specs[spec.name] = spec

    def get(self, name: str) -> Optional[JitSpec]:
        return self._specs.get(name)

    def __iter__(self):
        return iter(sorted(self._specs.values(), key=lambda s: s.name))


jit_spec_registry = JitSpecRegistry()


def gen_jit_spec(
    name: str,
    sources: Sequence[Union[str, Path]],
    extra_cflags: Optional[List[str]] = None,
    extra_cuda_cflags: Optional[List[str]] = None,
    extra_ldflags: Optional[List[str]] = None,
    extra_include_paths: Optional[List[Union[str, Path]]] = None,
    needs_device_linking: bool = False,
) -> JitSpec:
    verbose = os.environ.get("FAKEINFER_JIT_VERBOSE", "0") == "1"  # expect(torch<=2.4): jit-environ
    cflags = ["-O3", "-std=c++17", "-Wno-switch-bool"]
    cuda_cflags = [
        "-O3",
        "-std=c++17",
        f"--threads={os.environ.get('FAKEINFER_NVCC_THREADS', '1')}",
        "-use_fast_math",
        "-DFLASHINFER_ENABLE_F16",
        "-DFLASHINFER_ENABLE_BF16",
    ]
    cuda_cflags += ["-g", "-lineinfo"] if verbose else ["-DNDEBUG"]
    if extra_cflags is not None:
        cflags += extra_cflags
    if extra_cuda_cflags is not None:
        cuda_cflags += extra_cuda_cflags

    spec = JitSpec(
        name=name,
        sources=list(sources),
        extra_cflags=cflags,
        extra_cuda_cflags=cuda_cflags,
        extra_ldflags=extra_ldflags,
        extra_include_dirs=list(extra_include_paths) if extra_include_paths is not None else None,
        needs_device_linking=needs_device_linking,
    )
    jit_spec_registry.register(spec)  # frame: register
    return spec


def get_tmpdir() -> Path:
    tmpdir = jit_env.FAKEINFER_JIT_DIR / "tmp"
    if not tmpdir.exists():  # expect: stat-tmpdir
        tmpdir.mkdir(parents=True, exist_ok=True)
    return tmpdir


_LINK_SCRIPT = r"""
import pathlib, sys
out = pathlib.Path(sys.argv[1])
out.parent.mkdir(parents=True, exist_ok=True)
out.write_bytes(b"\x7fFAKEINFER-SO\x00" + out.stem.encode())
"""


def run_ninja(workdir: Path, target: Path, verbose: bool) -> None:
    """'Compiles' the op: a child process writes the placeholder shared object."""
    workdir.mkdir(parents=True, exist_ok=True)
    cmd = [sys.executable, "-c", _LINK_SCRIPT, str(target)]
    if verbose:
        logger.info("running %s", " ".join(cmd))
    subprocess.run(cmd, check=True, cwd=workdir)
