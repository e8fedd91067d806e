"""Where the JIT cache and AOT artefacts live (mimics flashinfer/jit/env.py)."""

import os
import pathlib

import fakeinfer


def _get_workspace_dir_name() -> pathlib.Path:
    base = os.environ.get("FAKEINFER_WORKSPACE_BASE")
    if base is None:
        base = pathlib.Path.home()
    arch = os.environ.get("FAKEINFER_EMULATED_SM", "12.0").replace(".", "")
    return pathlib.Path(base) / ".cache" / "fakeinfer" / fakeinfer.__version__ / f"sm{arch}"


FAKEINFER_BASE_DIR = pathlib.Path(__file__).resolve().parents[1]
FAKEINFER_WORKSPACE_DIR = _get_workspace_dir_name()
FAKEINFER_JIT_DIR = FAKEINFER_WORKSPACE_DIR / "cached_ops"
FAKEINFER_GEN_SRC_DIR = FAKEINFER_WORKSPACE_DIR / "generated"
FAKEINFER_CSRC_DIR = FAKEINFER_BASE_DIR / "data" / "csrc"
FAKEINFER_AOT_DIR = FAKEINFER_BASE_DIR / "data" / "aot"
